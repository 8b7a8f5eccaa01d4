// libqrencode for Sources/FRProfileCommands/Support/QRCode.swift (the only importer), loaded with dlopen
// when a journey shows an MFA registration URI, as Sources/CCurl does for libcurl: nothing else
// maps it, and without it the URI is shown as text alone. qrencode.h supplies the types; each
// frp_QRcode_* calls the function of the same name. Call frp_qrencode_load first.
// Building needs qrencode.h (Debian libqrencode-dev); showing a QR code needs libqrencode.so.4
// (libqrencode4).
#ifndef FR_PROFILE_CQRENCODE_H
#define FR_PROFILE_CQRENCODE_H
#include <qrencode.h>

/// Loads libqrencode.so.4 once per process. Returns 1 when its functions were found; 0 with
/// `*reason` (when not NULL) pointing at a static explanation.
int frp_qrencode_load(const char **reason);
/// An 8-bit QR code of `text` at error correction level M, the smallest version that holds it;
/// NULL on failure. Free it with frp_QRcode_free.
QRcode *frp_QRcode_encode(const char *text);
void frp_QRcode_free(QRcode *code);
#endif
