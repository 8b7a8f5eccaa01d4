#!/usr/bin/env python3
"""Man pages for fr-profile, from the same source as --help.

Reads the command tree that swift-argument-parser dumps (`--experimental-dump-help`) from the
fr-profile executable. Writes:

  OUT/man/man1/fr-profile.1, fr-profile-<command>.1   roff man(7) pages; the help's discussion
      becomes DESCRIPTION and its "HEADING:" blocks (EXAMPLES:, EXIT CODES:) become sections;
      packaging/man/<page>.roff, when present, is appended (FILES, ENVIRONMENT, ...)

The shell completions are swift-argument-parser's own (`fr-profile --generate-completion-script`,
see the Makefile's `docs`): they know nested commands and complete files where an option or
argument takes one (`completion: .file()`), which ours did not do better.

We generate rather than use swift-argument-parser's GenerateManual plugin: the plugin builds a
debug copy of the product and writes mdoc without our hand-written sections.

usage: gen-docs.py FR_PROFILE OUTDIR [DATE]
"""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def dump(binary):
    text = subprocess.run([binary, "--experimental-dump-help"], check=True, capture_output=True, text=True).stdout
    return json.loads(text)["command"]


def tree(fr_profile):
    root = dump(fr_profile)
    root["subcommands"] = [c for c in root.get("subcommands", []) if c["commandName"] != "help"]
    return root


def options(command):
    """The visible options and flags of `command`, help and version included."""
    result = []
    for argument in command.get("arguments", []):
        if not argument.get("shouldDisplay", True) or argument["kind"] == "positional":
            continue
        result.append(argument)
    return result


def positionals(command):
    return [a for a in command.get("arguments", []) if a["kind"] == "positional" and a.get("shouldDisplay", True)]


def spellings(argument):
    names = []
    for name in argument.get("names", []):
        if name["kind"] == "short":
            names.append("-" + name["name"])
        elif name["kind"] == "long":
            names.append("--" + name["name"])
        elif name["kind"] == "longWithSingleDash":
            names.append("-" + name["name"])
    return names


# --- roff ---------------------------------------------------------------------------------------

def roff(text):
    text = text.replace("\\", "\\e").replace("-", "\\-")
    lines = []
    for line in text.split("\n"):
        if line.startswith(".") or line.startswith("'"):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


HEADING = re.compile(r"^([A-Z][A-Z ]+[A-Z])( \(.*\))?:(?: (.*))?$")


def discussion_sections(text):
    """[(heading or None, [lines])]: a line "HEADING:", "HEADING (note):" or "HEADING: text"
    starts a section (EXIT CODES becomes EXIT STATUS); the note and text are its first lines."""
    sections = [(None, [])]
    for line in (text or "").split("\n"):
        match = HEADING.match(line)
        if match:
            heading = match.group(1)
            first = [t for t in (match.group(2) and match.group(2).strip()[1:-1].capitalize() + ".", match.group(3)) if t]
            sections.append(("EXIT STATUS" if heading == "EXIT CODES" else heading, first))
        else:
            sections[-1][1].append(line)
    return sections


def body(lines):
    """Paragraphs as text; indented lines (tables, examples) kept as they are."""
    out = []
    preformatted = False
    for line in lines:
        indented = line.startswith("  ")
        if indented and not preformatted:
            out.append(".PP\n.nf\n.RS 4")
            preformatted = True
        elif not indented and preformatted:
            out.append(".RE\n.fi")
            preformatted = False
        if not line.strip():
            if not preformatted:
                out.append(".PP")
            continue
        out.append(roff(line[2:] if indented else line))
    if preformatted:
        out.append(".RE\n.fi")
    return "\n".join(out)


def synopsis(name, command):
    parts = [roff(name)]
    if [s for s in command.get("subcommands", []) if s["commandName"] != "help"]:
        parts.append("\\fICOMMAND\\fR [\\fIOPTIONS\\fR]")
    else:
        parts.append("[\\fIOPTIONS\\fR]")
    for positional in positionals(command):
        value = positional.get("valueName") or "ARG"
        parts.append(("[\\fI%s\\fR]" if positional.get("isOptional") else "\\fI%s\\fR") % roff(value.upper() if value.islower() else value))
    return ".SH SYNOPSIS\n.B %s\n" % parts[0] + " ".join(parts[1:])


def option_list(command):
    out = [".SH OPTIONS"]
    for argument in positionals(command):
        value = argument.get("valueName") or "ARG"
        out.append(".TP\n\\fI%s\\fR\n%s" % (roff(value.upper() if value.islower() else value), roff(argument.get("abstract", ""))))
    for argument in options(command):
        names = ", ".join("\\fB%s\\fR" % roff(n) for n in spellings(argument))
        if argument["kind"] == "option":
            names += " \\fI%s\\fR" % roff(argument.get("valueName", "VALUE"))
        text = argument.get("abstract", "")
        default = argument.get("defaultValue")
        if default and argument["kind"] == "option" and "default" not in text:
            text += " (default: %s)" % default
        if argument.get("isRepeating") and argument["kind"] == "option":
            text += " May be repeated."
        out.append(".TP\n%s\n%s" % (names, roff(text)))
    return "\n".join(out)


def page(name, section_title, command, date, version, subcommands=None):
    page_name = name.replace(" ", "-")
    out = ['.TH "%s" 1 "%s" "fr-profile %s" "User Commands"' % (page_name.upper(), date, version), ".nh", ".ad l"]
    summary = command.get("abstract", "").rstrip(".")
    first_word = summary.split(" ", 1)[0]
    if len(first_word) == 1 or not first_word.isupper():  # "A Linux …" → "a Linux …"; "AM …" stays
        summary = summary[:1].lower() + summary[1:]
    out.append(".SH NAME\n%s \\- %s" % (roff(page_name), roff(summary)))
    out.append(synopsis(name, command))
    sections = discussion_sections(command.get("discussion", ""))
    out.append(".SH DESCRIPTION\n" + roff(command.get("abstract", "")) + "\n.PP\n" + body(sections[0][1]))
    if subcommands:
        out.append(".SH COMMANDS")
        for sub in subcommands:
            out.append(".TP\n\\fB%s %s\\fR\n%s\nSee \\fB%s\\-%s\\fR(1)." % (
                roff(name), roff(sub["commandName"]), roff(sub.get("abstract", "")), roff(page_name),
                roff(sub["commandName"])))
    out.append(option_list(command))
    for heading, lines in sections[1:]:
        out.append(".SH %s\n%s" % (heading, body(lines)))
    extra = os.path.join(HERE, "man", page_name + ".roff")
    if os.path.exists(extra):
        with open(extra) as f:
            out.append(f.read().rstrip("\n"))
    see_also = ["fr\\-profile"] + ["fr\\-profile\\-" + roff(s) for s in (subcommand_names if subcommand_names else [])]
    out.append(".SH SEE ALSO\n" + ",\n".join("\\fB%s\\fR(1)" % s for s in see_also if s != roff(page_name)))
    return "\n".join(out) + "\n"


# The root command's subcommands, for the SEE ALSO of every page (filled by main).
subcommand_names = []


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    fr_profile, out = sys.argv[1:3]
    date = sys.argv[3] if len(sys.argv) > 3 else subprocess.run(
        ["date", "-u", "+%Y-%m-%d"], capture_output=True, text=True).stdout.strip()
    version = subprocess.run([fr_profile, "--version"], check=True, capture_output=True, text=True).stdout.split()[0]
    root = tree(fr_profile)
    subcommand_names.extend(c["commandName"] for c in root["subcommands"])
    os.makedirs(os.path.join(out, "man", "man1"), exist_ok=True)

    def write(path, text):
        with open(os.path.join(out, path), "w") as f:
            f.write(text)

    write("man/man1/fr-profile.1", page("fr-profile", "", root, date, version, root["subcommands"]))
    for command in root["subcommands"]:
        subcommands = [c for c in command.get("subcommands", []) if c["commandName"] != "help"]
        write("man/man1/fr-profile-%s.1" % command["commandName"],
              page("fr-profile " + command["commandName"], "", command, date, version, subcommands))
        for sub in subcommands:
            write("man/man1/fr-profile-%s-%s.1" % (command["commandName"], sub["commandName"]),
                  page("fr-profile %s %s" % (command["commandName"], sub["commandName"]), "", sub, date, version))


if __name__ == "__main__":
    main()
