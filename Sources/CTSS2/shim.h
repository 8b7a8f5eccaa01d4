#ifndef FR_PROFILE_CTSS2_SHIM_H
#define FR_PROFILE_CTSS2_SHIM_H
// tpm2-tss ESAPI, the TCTI loader, marshalling and response-code decoding (Debian libtss2-dev).
// Only Sources/TPMKeys/TPMContext.swift uses these declarations.
#include <string.h>
#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_tctildr.h>

// The tss2 headers define their constants as casts (`((TPM2_ALG_ID) 0x0023)`); these helpers
// fill the structures in C so that the Swift side needs none of those macros.

/// The storage primary key: the TCG "EK Credential Profile"/"Provisioning Guidance" ECC SRK
/// template (P-256, AES-128-CFB, restricted decrypt, noDA, empty unique), the same template
/// `tpm2_createprimary -C o -G ecc` and systemd use, so the primary is the same key each time.
static inline void frp_srk_template(TPM2B_PUBLIC *out) {
  memset(out, 0, sizeof *out);
  TPMT_PUBLIC *p = &out->publicArea;
  p->type = TPM2_ALG_ECC;
  p->nameAlg = TPM2_ALG_SHA256;
  p->objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN |
                        TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_NODA | TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT;
  p->parameters.eccDetail.symmetric.algorithm = TPM2_ALG_AES;
  p->parameters.eccDetail.symmetric.keyBits.aes = 128;
  p->parameters.eccDetail.symmetric.mode.aes = TPM2_ALG_CFB;
  p->parameters.eccDetail.scheme.scheme = TPM2_ALG_NULL;
  p->parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
  p->parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
  p->unique.ecc.x.size = 32;
  p->unique.ecc.y.size = 32;
}

/// A P-256 ECDSA/SHA-256 signing key bound to this TPM and parent (fixedTPM, fixedParent),
/// generated inside it (sensitiveDataOrigin), used with its authValue (userWithAuth). Not
/// noDA: wrong authValues count towards the TPM's dictionary-attack lockout.
static inline void frp_signing_template(TPM2B_PUBLIC *out) {
  memset(out, 0, sizeof *out);
  TPMT_PUBLIC *p = &out->publicArea;
  p->type = TPM2_ALG_ECC;
  p->nameAlg = TPM2_ALG_SHA256;
  p->objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN |
                        TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_SIGN_ENCRYPT;
  p->parameters.eccDetail.symmetric.algorithm = TPM2_ALG_NULL;
  p->parameters.eccDetail.scheme.scheme = TPM2_ALG_ECDSA;
  p->parameters.eccDetail.scheme.details.ecdsa.hashAlg = TPM2_ALG_SHA256;
  p->parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
  p->parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
}

/// Whether `pub` is a key of the shape `frp_signing_template` makes (checked on every load).
static inline int frp_is_signing_key(const TPM2B_PUBLIC *pub) {
  const TPMT_PUBLIC *p = &pub->publicArea;
  return p->type == TPM2_ALG_ECC && p->parameters.eccDetail.curveID == TPM2_ECC_NIST_P256 &&
         (p->objectAttributes & TPMA_OBJECT_SIGN_ENCRYPT) && (p->objectAttributes & TPMA_OBJECT_FIXEDTPM) &&
         !(p->objectAttributes & TPMA_OBJECT_RESTRICTED);
}

/// ECDSA with SHA-256.
static inline void frp_ecdsa_scheme(TPMT_SIG_SCHEME *out) {
  memset(out, 0, sizeof *out);
  out->scheme = TPM2_ALG_ECDSA;
  out->details.ecdsa.hashAlg = TPM2_ALG_SHA256;
}

/// The empty ticket an unrestricted key signs an externally computed digest with.
static inline void frp_null_ticket(TPMT_TK_HASHCHECK *out) {
  memset(out, 0, sizeof *out);
  out->tag = TPM2_ST_HASHCHECK;
  out->hierarchy = TPM2_RH_NULL;
}

/// The persistent handle the TCG reserves for the SRK.
static const TPM2_HANDLE frp_srk_persistent_handle = 0x81000001;

/// Response codes (format-one codes with the parameter/session/handle number masked off).
static const TSS2_RC frp_rc_layer_mask = 0xFFFF0000u;
/// A TPM-layer code without its parameter, handle or session number (other layers unchanged).
static inline TSS2_RC frp_rc_base(TSS2_RC rc) {
  if (rc & frp_rc_layer_mask) return rc;
  if (rc & 0x80u) return 0x80u | (rc & 0x3Fu);  // TPM2_RC_FMT1: error number in bits 0..5
  return rc & 0xFFFu;
}
static const TSS2_RC frp_rc_auth_fail = 0x08E;  // TPM2_RC_AUTH_FAIL
static const TSS2_RC frp_rc_bad_auth = 0x0A2;   // TPM2_RC_BAD_AUTH
static const TSS2_RC frp_rc_integrity = 0x09F;  // TPM2_RC_INTEGRITY
static const TSS2_RC frp_rc_handle = 0x08B;     // TPM2_RC_HANDLE
static const TSS2_RC frp_rc_lockout = 0x921;    // TPM2_RC_LOCKOUT (warning)
static const TSS2_RC frp_rc_retry = 0x922;      // TPM2_RC_RETRY

#endif
