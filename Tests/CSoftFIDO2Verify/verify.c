// See include/CSoftFIDO2Verify.h.
#include "CSoftFIDO2Verify.h"
#include <fido.h>
#include <fido/es256.h>
#include <string.h>

int sfv_cred_verify_self(void *cred) { return fido_cred_verify_self(cred); }

int sfv_cred_pubkey(void *cred, unsigned char out[64]) {
  if (fido_cred_type(cred) != COSE_ES256 || fido_cred_pubkey_len(cred) != 64) return -1;
  memcpy(out, fido_cred_pubkey_ptr(cred), 64);
  return 0;
}

uint8_t sfv_cred_flags(void *cred) { return fido_cred_flags(cred); }
uint32_t sfv_cred_sigcount(void *cred) { return fido_cred_sigcount(cred); }

int sfv_assert_verify_es256(void *assert, size_t index, const unsigned char *xy, size_t length) {
  es256_pk_t *pk = es256_pk_new();
  if (pk == NULL) return FIDO_ERR_INTERNAL;
  int r = es256_pk_from_ptr(pk, xy, length);
  if (r == FIDO_OK) r = fido_assert_verify(assert, index, COSE_ES256, pk);
  es256_pk_free(&pk);
  return r;
}

uint8_t sfv_assert_flags(void *assert, size_t index) { return fido_assert_flags(assert, index); }
uint32_t sfv_assert_sigcount(void *assert, size_t index) { return fido_assert_sigcount(assert, index); }
