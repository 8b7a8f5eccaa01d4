/// The version of fr-profile: `fr-profile --version`, the
/// journey client's HTTP User-Agent and the profile's `browser.userAgent`. The one place it is
/// written; `package`, so embedders of Collectors do not inherit it as API.
package let frProfileVersion = "0.1.0"
