import FRProfileCommands

// The commands live in the FRProfileCommands library, so that tests link them without this
// executable's release linker settings (docs/development.md "One build").
FRProfile.main()
