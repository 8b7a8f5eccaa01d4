// libfido2's own verifiers for the software key's tests (Tests/SoftFIDO2Tests), linked with
// -lfido2 in this test-only target: the shipped code reaches libfido2 only through
// Sources/CFIDO2's dlopen table, which has no verifier. `cred` is a fido_cred_t *, `assert` a
// fido_assert_t * made through that table (the same libfido2.so.1 in the process).
#ifndef FR_PROFILE_CSOFTFIDO2VERIFY_H
#define FR_PROFILE_CSOFTFIDO2VERIFY_H
#include <stddef.h>
#include <stdint.h>

/// fido_cred_verify_self: a packed self attestation checked against the credential's own key.
int sfv_cred_verify_self(void *cred);
/// The credential's ES256 public key, x||y (64 bytes) into `out`; 0 on success.
int sfv_cred_pubkey(void *cred, unsigned char out[64]);
/// fido_cred_flags and fido_cred_sigcount.
uint8_t sfv_cred_flags(void *cred);
uint32_t sfv_cred_sigcount(void *cred);
/// fido_assert_verify of assertion `index` with an ES256 key given as x||y (64 bytes).
int sfv_assert_verify_es256(void *assert, size_t index, const unsigned char *xy, size_t length);
/// fido_assert_flags and fido_assert_sigcount of assertion `index`.
uint8_t sfv_assert_flags(void *assert, size_t index);
uint32_t sfv_assert_sigcount(void *assert, size_t index);
#endif
