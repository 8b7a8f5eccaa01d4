#ifndef FR_PROFILE_CTSS2_H
#define FR_PROFILE_CTSS2_H
// tpm2-tss ESAPI, the TCTI loader, marshalling and response-code decoding, for
// Sources/TPMKeys/TPMContext.swift (the only importer). The four libraries are loaded with dlopen
// on first use instead of linked, as Sources/CUdev/include/CUdev.h does for libudev: no
// executable carries a DT_NEEDED entry on libtss2-*, so `fr-profile collect` never maps them.
// The tss2 headers supply the types; each frp_<function> below calls the tpm2-tss function of
// the same name. Call frp_tss2_load first and the others only after it returned 1. The static
// inline helpers further down call no library.
// Building needs the tss2 headers (Debian libtss2-dev); using a TPM needs libtss2-esys.so.0,
// libtss2-tctildr.so.0, libtss2-mu.so.0 and libtss2-rc.so.0 (and the TCTI module the TCTI string
// names, which libtss2-tctildr loads itself).
#include <string.h>
#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_tctildr.h>

/// Loads the four tpm2-tss libraries and their functions, once per process (later calls return
/// the first answer). Returns 1 when every function was found; 0 otherwise, with `*reason` (when
/// `reason` is not NULL) pointing at a static, NUL-terminated explanation (dlerror's text, or
/// the missing symbol).
int frp_tss2_load(const char **reason);
/// After frp_tss2_load returned 0: the soname that could not be loaded (or lacked a function),
/// e.g. "libtss2-esys.so.0"; NULL before frp_tss2_load and after it succeeded.
const char *frp_tss2_failed_soname(void);

TSS2_RC frp_Tss2_TctiLdr_Initialize(const char *nameConf, TSS2_TCTI_CONTEXT **context);
void frp_Tss2_TctiLdr_Finalize(TSS2_TCTI_CONTEXT **context);
TSS2_RC frp_Esys_Initialize(ESYS_CONTEXT **esys_context, TSS2_TCTI_CONTEXT *tcti, TSS2_ABI_VERSION *abiVersion);
void frp_Esys_Finalize(ESYS_CONTEXT **context);
void frp_Esys_Free(void *ptr);
TSS2_RC frp_Esys_GetRandom(
  ESYS_CONTEXT *esysContext, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3, UINT16 bytesRequested,
  TPM2B_DIGEST **randomBytes);
TSS2_RC frp_Esys_TR_FromTPMPublic(
  ESYS_CONTEXT *esysContext, TPM2_HANDLE tpm_handle, ESYS_TR optionalSession1, ESYS_TR optionalSession2,
  ESYS_TR optionalSession3, ESYS_TR *object);
TSS2_RC frp_Esys_TR_Close(ESYS_CONTEXT *esys_context, ESYS_TR *rsrc_handle);
TSS2_RC frp_Esys_TR_Serialize(ESYS_CONTEXT *esys_context, ESYS_TR object, uint8_t **buffer, size_t *buffer_size);
TSS2_RC frp_Esys_TR_Deserialize(ESYS_CONTEXT *esys_context, uint8_t const *buffer, size_t buffer_size, ESYS_TR *esys_handle);
TSS2_RC frp_Esys_TR_GetName(ESYS_CONTEXT *esysContext, ESYS_TR handle, TPM2B_NAME **name);
TSS2_RC frp_Esys_TRSess_SetAttributes(ESYS_CONTEXT *esysContext, ESYS_TR session, TPMA_SESSION flags, TPMA_SESSION mask);
TSS2_RC frp_Esys_TR_SetAuth(ESYS_CONTEXT *esysContext, ESYS_TR handle, TPM2B_AUTH const *authValue);
TSS2_RC frp_Esys_FlushContext(ESYS_CONTEXT *esysContext, ESYS_TR flushHandle);
TSS2_RC frp_Esys_CreatePrimary(
  ESYS_CONTEXT *esysContext, ESYS_TR primaryHandle, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3,
  const TPM2B_SENSITIVE_CREATE *inSensitive, const TPM2B_PUBLIC *inPublic, const TPM2B_DATA *outsideInfo,
  const TPML_PCR_SELECTION *creationPCR, ESYS_TR *objectHandle, TPM2B_PUBLIC **outPublic,
  TPM2B_CREATION_DATA **creationData, TPM2B_DIGEST **creationHash, TPMT_TK_CREATION **creationTicket);
TSS2_RC frp_Esys_Create(
  ESYS_CONTEXT *esysContext, ESYS_TR parentHandle, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3,
  const TPM2B_SENSITIVE_CREATE *inSensitive, const TPM2B_PUBLIC *inPublic, const TPM2B_DATA *outsideInfo,
  const TPML_PCR_SELECTION *creationPCR, TPM2B_PRIVATE **outPrivate, TPM2B_PUBLIC **outPublic,
  TPM2B_CREATION_DATA **creationData, TPM2B_DIGEST **creationHash, TPMT_TK_CREATION **creationTicket);
TSS2_RC frp_Esys_CreateLoaded(
  ESYS_CONTEXT *esysContext, ESYS_TR parentHandle, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3,
  const TPM2B_SENSITIVE_CREATE *inSensitive, const TPM2B_TEMPLATE *inPublic, ESYS_TR *objectHandle, TPM2B_PRIVATE **outPrivate,
  TPM2B_PUBLIC **outPublic);
TSS2_RC frp_Esys_Load(
  ESYS_CONTEXT *esysContext, ESYS_TR parentHandle, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3,
  const TPM2B_PRIVATE *inPrivate, const TPM2B_PUBLIC *inPublic, ESYS_TR *objectHandle);
TSS2_RC frp_Esys_Sign(
  ESYS_CONTEXT *esysContext, ESYS_TR keyHandle, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3,
  const TPM2B_DIGEST *digest, const TPMT_SIG_SCHEME *inScheme, const TPMT_TK_HASHCHECK *validation,
  TPMT_SIGNATURE **signature);
TSS2_RC frp_Esys_HMAC(
  ESYS_CONTEXT *esysContext, ESYS_TR handle, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3, const TPM2B_MAX_BUFFER *buffer,
  TPMI_ALG_HASH hashAlg, TPM2B_DIGEST **outHMAC);
TSS2_RC frp_Esys_DictionaryAttackParameters(
  ESYS_CONTEXT *esysContext, ESYS_TR lockHandle, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3,
  UINT32 newMaxTries, UINT32 newRecoveryTime, UINT32 lockoutRecovery);
TSS2_RC frp_Esys_EvictControl(
  ESYS_CONTEXT *esysContext, ESYS_TR auth, ESYS_TR objectHandle, ESYS_TR shandle1, ESYS_TR shandle2,
  ESYS_TR shandle3, TPMI_DH_PERSISTENT persistentHandle, ESYS_TR *newObjectHandle);
TSS2_RC frp_Tss2_MU_TPMT_PUBLIC_Marshal(TPMT_PUBLIC const *src, uint8_t buffer[], size_t buffer_size, size_t *offset);
TSS2_RC frp_Tss2_MU_TPM2B_PUBLIC_Marshal(TPM2B_PUBLIC const *src, uint8_t buffer[], size_t buffer_size, size_t *offset);
TSS2_RC frp_Tss2_MU_TPM2B_PUBLIC_Unmarshal(uint8_t const buffer[], size_t buffer_size, size_t *offset, TPM2B_PUBLIC *dest);
TSS2_RC frp_Tss2_MU_TPM2B_PRIVATE_Marshal(TPM2B_PRIVATE const *src, uint8_t buffer[], size_t buffer_size, size_t *offset);
TSS2_RC frp_Tss2_MU_TPM2B_PRIVATE_Unmarshal(uint8_t const buffer[], size_t buffer_size, size_t *offset, TPM2B_PRIVATE *dest);
const char *frp_Tss2_RC_Decode(TSS2_RC rc);
TSS2_RC frp_Esys_NV_ReadPublic(
  ESYS_CONTEXT *esysContext, ESYS_TR nvIndex, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3,
  TPM2B_NV_PUBLIC **nvPublic, TPM2B_NAME **nvName);
TSS2_RC frp_Esys_NV_Read(
  ESYS_CONTEXT *esysContext, ESYS_TR authHandle, ESYS_TR nvIndex, ESYS_TR shandle1, ESYS_TR shandle2,
  ESYS_TR shandle3, UINT16 size, UINT16 offset, TPM2B_MAX_NV_BUFFER **data);
TSS2_RC frp_Esys_StartAuthSession(
  ESYS_CONTEXT *esysContext, ESYS_TR tpmKey, ESYS_TR bind, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3,
  const TPM2B_NONCE *nonceCaller, TPM2_SE sessionType, const TPMT_SYM_DEF *symmetric, TPMI_ALG_HASH authHash,
  ESYS_TR *sessionHandle);
TSS2_RC frp_Esys_PolicySecret(
  ESYS_CONTEXT *esysContext, ESYS_TR authHandle, ESYS_TR policySession, ESYS_TR shandle1, ESYS_TR shandle2,
  ESYS_TR shandle3, const TPM2B_NONCE *nonceTPM, const TPM2B_DIGEST *cpHashA, const TPM2B_NONCE *policyRef,
  INT32 expiration, TPM2B_TIMEOUT **timeout, TPMT_TK_AUTH **policyTicket);
TSS2_RC frp_Esys_ActivateCredential(
  ESYS_CONTEXT *esysContext, ESYS_TR activateHandle, ESYS_TR keyHandle, ESYS_TR shandle1, ESYS_TR shandle2,
  ESYS_TR shandle3, const TPM2B_ID_OBJECT *credentialBlob, const TPM2B_ENCRYPTED_SECRET *secret, TPM2B_DIGEST **certInfo);
TSS2_RC frp_Esys_Certify(
  ESYS_CONTEXT *esysContext, ESYS_TR objectHandle, ESYS_TR signHandle, ESYS_TR shandle1, ESYS_TR shandle2,
  ESYS_TR shandle3, const TPM2B_DATA *qualifyingData, const TPMT_SIG_SCHEME *inScheme, TPM2B_ATTEST **certifyInfo,
  TPMT_SIGNATURE **signature);
TSS2_RC frp_Esys_Quote(
  ESYS_CONTEXT *esysContext, ESYS_TR signHandle, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3,
  const TPM2B_DATA *qualifyingData, const TPMT_SIG_SCHEME *inScheme, const TPML_PCR_SELECTION *PCRselect,
  TPM2B_ATTEST **quoted, TPMT_SIGNATURE **signature);
TSS2_RC frp_Esys_PCR_Read(
  ESYS_CONTEXT *esysContext, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3, const TPML_PCR_SELECTION *pcrSelectionIn,
  UINT32 *pcrUpdateCounter, TPML_PCR_SELECTION **pcrSelectionOut, TPML_DIGEST **pcrValues);

/// One bank's selection of PCRs (`bitmap`: PCR n is bit n % 8 of byte n / 8), for Quote and
/// PCR_Read: sizeofSelect 3, the PC Client's 24 PCRs.
static inline void frp_pcr_selection(TPML_PCR_SELECTION *out, TPMI_ALG_HASH hash, uint32_t bitmap) {
  memset(out, 0, sizeof *out);
  out->count = 1;
  out->pcrSelections[0].hash = hash;
  out->pcrSelections[0].sizeofSelect = 3;
  out->pcrSelections[0].pcrSelect[0] = bitmap & 0xff;
  out->pcrSelections[0].pcrSelect[1] = (bitmap >> 8) & 0xff;
  out->pcrSelections[0].pcrSelect[2] = (bitmap >> 16) & 0xff;
}

// The tss2 headers define their constants as casts (`((TPM2_ALG_ID) 0x0023)`); these helpers
// fill the structures in C so that the Swift side needs none of those macros.

/// The storage primary key: the TCG "EK Credential Profile"/"Provisioning Guidance" ECC SRK
/// template (P-256, AES-128-CFB, restricted decrypt, noDA, 32-byte zero x and y in unique), so
/// the primary is the same key each time. `tpm2_createprimary -C o -G ecc` fills no unique
/// field: its primary is another key (a test shows it).
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
/// generated inside it (sensitiveDataOrigin), used with its authValue (userWithAuth). With
/// `no_da` (a key without a PIN: its empty authValue guards nothing) noDA, so the TPM's
/// dictionary-attack lockout never blocks it; a PIN key is not noDA, so wrong PINs count.
static inline void frp_signing_template(TPM2B_PUBLIC *out, int no_da) {
  memset(out, 0, sizeof *out);
  TPMT_PUBLIC *p = &out->publicArea;
  p->type = TPM2_ALG_ECC;
  p->nameAlg = TPM2_ALG_SHA256;
  p->objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN |
                        TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_SIGN_ENCRYPT | (no_da ? TPMA_OBJECT_NODA : 0);
  p->parameters.eccDetail.symmetric.algorithm = TPM2_ALG_NULL;
  p->parameters.eccDetail.scheme.scheme = TPM2_ALG_ECDSA;
  p->parameters.eccDetail.scheme.details.ecdsa.hashAlg = TPM2_ALG_SHA256;
  p->parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
  p->parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
}

/// An HMAC-SHA256 key (a keyed-hash object) made inside the TPM (sensitiveDataOrigin), bound to
/// it and its parent (fixedTPM, fixedParent), used without an authValue and noDA: its secret
/// never leaves the TPM, so a value keyed with it cannot be recomputed from a copied disk (the
/// sign-in's offline entries).
static inline void frp_hmac_template(TPM2B_PUBLIC *out) {
  memset(out, 0, sizeof *out);
  TPMT_PUBLIC *p = &out->publicArea;
  p->type = TPM2_ALG_KEYEDHASH;
  p->nameAlg = TPM2_ALG_SHA256;
  p->objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN |
                        TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_SIGN_ENCRYPT | TPMA_OBJECT_NODA;
  p->parameters.keyedHashDetail.scheme.scheme = TPM2_ALG_HMAC;
  p->parameters.keyedHashDetail.scheme.details.hmac.hashAlg = TPM2_ALG_SHA256;
}

/// Whether `pub` is a key of the shape `frp_hmac_template` makes.
static inline int frp_is_hmac_key(const TPM2B_PUBLIC *pub) {
  const TPMT_PUBLIC *p = &pub->publicArea;
  return p->type == TPM2_ALG_KEYEDHASH && p->parameters.keyedHashDetail.scheme.scheme == TPM2_ALG_HMAC &&
         p->parameters.keyedHashDetail.scheme.details.hmac.hashAlg == TPM2_ALG_SHA256 &&
         (p->objectAttributes & TPMA_OBJECT_FIXEDTPM) && (p->objectAttributes & TPMA_OBJECT_SENSITIVEDATAORIGIN);
}

/// The TCG EK Credential Profile's template L-2, the ECC NIST P-256 endorsement key: restricted
/// decrypt, usable only through policy A (PolicySecret(TPM_RH_ENDORSEMENT)), no userWithAuth,
/// 32-byte zero unique fields. The same EK every time from the endorsement seed; its public key
/// is the one in the manufacturer's EK certificate (NV 0x01C0000A).
static inline void frp_ek_template(TPM2B_PUBLIC *out) {
  static const uint8_t policy_a[32] = {0x83, 0x71, 0x97, 0x67, 0x44, 0x84, 0xB3, 0xF8, 0x1A, 0x90, 0xCC,
                                       0x8D, 0x46, 0xA5, 0xD7, 0x24, 0xFD, 0x52, 0xD7, 0x6E, 0x06, 0x52,
                                       0x0B, 0x64, 0xF2, 0xA1, 0xDA, 0x1B, 0x33, 0x14, 0x69, 0xAA};
  // The storage template's key (P-256, AES-128-CFB, restricted decrypt, 32-byte zero unique),
  // used through policy A only: adminWithPolicy, no userWithAuth, not noDA.
  frp_srk_template(out);
  TPMT_PUBLIC *p = &out->publicArea;
  p->objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN |
                        TPMA_OBJECT_ADMINWITHPOLICY | TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT;
  p->authPolicy.size = 32;
  memcpy(p->authPolicy.buffer, policy_a, 32);
}

/// The TCG EK Credential Profile's template L-1, the RSA 2048 endorsement key every TPM has
/// (its certificate at NV 0x01C00002): restricted decrypt, AES-128-CFB, policy A, the default
/// exponent, a 256-byte zero unique field.
static inline void frp_ek_rsa_template(TPM2B_PUBLIC *out) {
  TPM2B_PUBLIC ecc;
  frp_ek_template(&ecc);
  memset(out, 0, sizeof *out);
  TPMT_PUBLIC *p = &out->publicArea;
  p->type = TPM2_ALG_RSA;
  p->nameAlg = TPM2_ALG_SHA256;
  p->objectAttributes = ecc.publicArea.objectAttributes;
  p->authPolicy = ecc.publicArea.authPolicy;
  p->parameters.rsaDetail.symmetric.algorithm = TPM2_ALG_AES;
  p->parameters.rsaDetail.symmetric.keyBits.aes = 128;
  p->parameters.rsaDetail.symmetric.mode.aes = TPM2_ALG_CFB;
  p->parameters.rsaDetail.scheme.scheme = TPM2_ALG_NULL;
  p->parameters.rsaDetail.keyBits = 2048;
  p->parameters.rsaDetail.exponent = 0;
  p->unique.rsa.size = 256;
}

/// The TCG SRK template for RSA 2048 (TPM 2.0 Provisioning Guidance: the EK template L-1 with
/// userWithAuth and noDA, no policy): what Windows and `swtpm_setup --create-spk` make
/// persistent at 0x81000001. Only ever created to compare its name with a persistent SRK's.
static inline void frp_srk_rsa_template(TPM2B_PUBLIC *out) {
  frp_ek_rsa_template(out);
  TPMT_PUBLIC *p = &out->publicArea;
  p->objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN |
                        TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_NODA | TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT;
  p->authPolicy.size = 0;
  memset(p->authPolicy.buffer, 0, sizeof p->authPolicy.buffer);
}

/// An attestation key: a restricted P-256 ECDSA/SHA-256 signing key (it signs only what the TPM
/// itself produced, such as TPM2_Certify's attestation), fixedTPM, fixedParent,
/// sensitiveDataOrigin, noDA, used without an authValue.
static inline void frp_ak_template(TPM2B_PUBLIC *out) {
  frp_signing_template(out, 1);
  out->publicArea.objectAttributes |= TPMA_OBJECT_RESTRICTED;
}

/// A policy session with SHA-256, no encryption or binding.
static inline void frp_no_symmetric(TPMT_SYM_DEF *out) {
  memset(out, 0, sizeof *out);
  out->algorithm = TPM2_ALG_NULL;
}
/// AES-128 in CFB mode: the parameter encryption of a session (TPM 2.0 Part 1, 21.3).
static inline void frp_aes128_cfb(TPMT_SYM_DEF *out) {
  memset(out, 0, sizeof *out);
  out->algorithm = TPM2_ALG_AES;
  out->keyBits.aes = 128;
  out->mode.aes = TPM2_ALG_CFB;
}
static const TPM2_SE frp_session_policy = TPM2_SE_POLICY;
static const TPM2_SE frp_session_hmac = TPM2_SE_HMAC;
/// Session attributes: keep the session after the command; encrypt the command's first
/// parameter (a TPM2B) with the session's key.
static const TPMA_SESSION frp_session_continue = TPMA_SESSION_CONTINUESESSION;
static const TPMA_SESSION frp_session_decrypt = TPMA_SESSION_DECRYPT;
/// The persistent handles the TCG reserves for the EKs (TCG EK Credential Profile 2.3, section
/// 2.2.1.4): RSA 2048 (template L-1) and ECC NIST P-256 (template L-2).
static const TPM2_HANDLE frp_ek_rsa_persistent_handle = 0x81010001;
static const TPM2_HANDLE frp_ek_ecc_persistent_handle = 0x81010002;
static const TPMI_ALG_HASH frp_alg_sha256 = TPM2_ALG_SHA256;
/// The NV indices of the EK certificates (TCG EK Credential Profile): RSA 2048, ECC P-256.
static const TPM2_HANDLE frp_ek_cert_rsa_index = 0x01C00002;
static const TPM2_HANDLE frp_ek_cert_ecc_index = 0x01C0000A;

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
static const TSS2_RC frp_rc_object_memory = 0x902;  // TPM2_RC_OBJECT_MEMORY (warning): every object slot is held
static const TSS2_RC frp_rc_command_code = 0x143;  // TPM2_RC_COMMAND_CODE: a command this TPM does not implement

/// Whether the TPM answered with a warning that passes by itself (format-zero warnings,
/// TPM2_RC_WARN 0x900): busy (RETRY, YIELDED, TESTING) or out of object, session or other
/// memory (another client holds the slots; without a resource manager they are few).
static inline int frp_rc_is_transient(TSS2_RC rc) {
  switch (frp_rc_base(rc)) {
  case 0x902:  // TPM2_RC_OBJECT_MEMORY
  case 0x903:  // TPM2_RC_SESSION_MEMORY
  case 0x904:  // TPM2_RC_MEMORY
  case 0x908:  // TPM2_RC_YIELDED
  case 0x90A:  // TPM2_RC_TESTING
  case 0x922:  // TPM2_RC_RETRY
    return 1;
  default:
    return 0;
  }
}

/// Whether the object attributes of a marshalled public area carry noDA (for tests).
static inline int frp_is_no_da(const TPM2B_PUBLIC *pub) { return (pub->publicArea.objectAttributes & TPMA_OBJECT_NODA) != 0; }

#endif
