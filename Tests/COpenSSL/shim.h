// The system OpenSSL, for the TLS side of the journey tests' loopback AM server only.
#ifndef FR_PROFILE_COPENSSL_SHIM_H
#define FR_PROFILE_COPENSSL_SHIM_H
#include <openssl/ssl.h>
#include <openssl/err.h>
#endif
