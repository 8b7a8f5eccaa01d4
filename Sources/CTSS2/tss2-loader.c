// See include/CTSS2.h. The shape of Sources/CUdev/udev-loader.c: one table behind pthread_once,
// each pointer typed from the tss2 headers (__typeof__), so the compiler still checks every call;
// here four libraries, each opened by soname in dependency order.
#include <stdlib.h>
#include "CTSS2.h"
#include "CLoader.h"
#include <pthread.h>
#include <stdio.h>

// Sonames; the Debian packages that ship them are named on the Swift side (TPMError).
enum { ESYS, TCTILDR, MU, RC, LIBRARIES };
static const char *const sonames[LIBRARIES] = {
  [ESYS] = "libtss2-esys.so.0",
  [TCTILDR] = "libtss2-tctildr.so.0",
  [MU] = "libtss2-mu.so.0",
  [RC] = "libtss2-rc.so.0",
};

// Every tpm2-tss function used, once, with its library: the table's fields and the dlsym list
// are made from it.
#define FRP_TSS2_FUNCTIONS(X)                                                                      \
  X(TCTILDR, Tss2_TctiLdr_Initialize)                                                              \
  X(TCTILDR, Tss2_TctiLdr_Finalize)                                                                \
  X(ESYS, Esys_Initialize)                                                                         \
  X(ESYS, Esys_Finalize)                                                                           \
  X(ESYS, Esys_Free)                                                                               \
  X(ESYS, Esys_GetRandom)                                                                          \
  X(ESYS, Esys_TR_FromTPMPublic)                                                                   \
  X(ESYS, Esys_TR_Close)                                                                           \
  X(ESYS, Esys_TR_Serialize)                                                                       \
  X(ESYS, Esys_TR_Deserialize)                                                                     \
  X(ESYS, Esys_TR_GetName)                                                                         \
  X(ESYS, Esys_TRSess_SetAttributes)                                                               \
  X(ESYS, Esys_TR_SetAuth)                                                                         \
  X(ESYS, Esys_FlushContext)                                                                       \
  X(ESYS, Esys_CreatePrimary)                                                                      \
  X(ESYS, Esys_Create)                                                                             \
  X(ESYS, Esys_CreateLoaded)                                                                       \
  X(ESYS, Esys_Load)                                                                               \
  X(ESYS, Esys_Sign)                                                                               \
  X(ESYS, Esys_HMAC)                                                                               \
  X(ESYS, Esys_DictionaryAttackParameters)                                                         \
  X(ESYS, Esys_EvictControl)                                                                       \
  X(ESYS, Esys_NV_ReadPublic)                                                                      \
  X(ESYS, Esys_NV_Read)                                                                            \
  X(ESYS, Esys_StartAuthSession)                                                                   \
  X(ESYS, Esys_PolicySecret)                                                                       \
  X(ESYS, Esys_ActivateCredential)                                                                 \
  X(ESYS, Esys_Certify)                                                                            \
  X(ESYS, Esys_Quote)                                                                              \
  X(ESYS, Esys_PCR_Read)                                                                           \
  X(MU, Tss2_MU_TPMT_PUBLIC_Marshal)                                                               \
  X(MU, Tss2_MU_TPM2B_PUBLIC_Marshal)                                                              \
  X(MU, Tss2_MU_TPM2B_PUBLIC_Unmarshal)                                                            \
  X(MU, Tss2_MU_TPM2B_PRIVATE_Marshal)                                                             \
  X(MU, Tss2_MU_TPM2B_PRIVATE_Unmarshal)                                                           \
  X(RC, Tss2_RC_Decode)

static struct {
#define FIELD(library, name) __typeof__(&name) name;
  FRP_TSS2_FUNCTIONS(FIELD)
#undef FIELD
} api;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;
static const char *failed;
static char why[256] = "libtss2 was not loaded";

static void load(void) {
  // tpm2-tss logs every TPM error response to stderr; fr-profile maps them to TPMError and
  // reports each once, so tpm2-tss's log stays off unless the user asks for it
  // (TSS2_LOG=all+debug). tpm2-tss reads only the environment for it: set once, here, before
  // the library is loaded, with overwrite 0 (the user's value wins). Process-wide and not
  // thread-safe against another thread's getenv, so done once behind pthread_once rather than
  // at every connection.
  setenv("TSS2_LOG", "all+NONE", 0);
  // The TCTI modules libtss2-tctildr opens link libtss2-mu themselves, so they find its symbols
  // although the libraries are opened RTLD_LOCAL.
  void *libraries[LIBRARIES];
  for (int i = 0; i < LIBRARIES; i++) {
    libraries[i] = frp_open_library(sonames[i], why, sizeof why);
    if (!libraries[i]) {
      failed = sonames[i];
      return;
    }
  }
  const struct frp_symbol symbols[] = {
#define ENTRY(library, name) {library, #name, (void **)&api.name},
    FRP_TSS2_FUNCTIONS(ENTRY)
#undef ENTRY
  };
  loaded = frp_resolve_symbols(libraries, sonames, symbols, sizeof symbols / sizeof symbols[0], why, sizeof why, &failed);
}

int frp_tss2_load(const char **reason) {
  pthread_once(&once, load);
  if (!loaded && reason) *reason = why;
  return loaded;
}
const char *frp_tss2_failed_soname(void) { return loaded ? NULL : failed; }

TSS2_RC frp_Tss2_TctiLdr_Initialize(const char *nameConf, TSS2_TCTI_CONTEXT **context) {
  return api.Tss2_TctiLdr_Initialize(nameConf, context);
}
void frp_Tss2_TctiLdr_Finalize(TSS2_TCTI_CONTEXT **context) { api.Tss2_TctiLdr_Finalize(context); }
TSS2_RC frp_Esys_Initialize(ESYS_CONTEXT **esys_context, TSS2_TCTI_CONTEXT *tcti, TSS2_ABI_VERSION *abiVersion) {
  return api.Esys_Initialize(esys_context, tcti, abiVersion);
}
void frp_Esys_Finalize(ESYS_CONTEXT **context) { api.Esys_Finalize(context); }
void frp_Esys_Free(void *ptr) { api.Esys_Free(ptr); }
TSS2_RC frp_Esys_GetRandom(
  ESYS_CONTEXT *esysContext, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3, UINT16 bytesRequested,
  TPM2B_DIGEST **randomBytes) {
  return api.Esys_GetRandom(esysContext, shandle1, shandle2, shandle3, bytesRequested, randomBytes);
}
TSS2_RC frp_Esys_TR_FromTPMPublic(
  ESYS_CONTEXT *esysContext, TPM2_HANDLE tpm_handle, ESYS_TR optionalSession1, ESYS_TR optionalSession2,
  ESYS_TR optionalSession3, ESYS_TR *object) {
  return api.Esys_TR_FromTPMPublic(esysContext, tpm_handle, optionalSession1, optionalSession2, optionalSession3, object);
}
TSS2_RC frp_Esys_TR_Close(ESYS_CONTEXT *esys_context, ESYS_TR *rsrc_handle) { return api.Esys_TR_Close(esys_context, rsrc_handle); }
TSS2_RC frp_Esys_TR_Serialize(ESYS_CONTEXT *esys_context, ESYS_TR object, uint8_t **buffer, size_t *buffer_size) {
  return api.Esys_TR_Serialize(esys_context, object, buffer, buffer_size);
}
TSS2_RC frp_Esys_TR_Deserialize(ESYS_CONTEXT *esys_context, uint8_t const *buffer, size_t buffer_size, ESYS_TR *esys_handle) {
  return api.Esys_TR_Deserialize(esys_context, buffer, buffer_size, esys_handle);
}
TSS2_RC frp_Esys_TR_GetName(ESYS_CONTEXT *esysContext, ESYS_TR handle, TPM2B_NAME **name) {
  return api.Esys_TR_GetName(esysContext, handle, name);
}
TSS2_RC frp_Esys_TRSess_SetAttributes(ESYS_CONTEXT *esysContext, ESYS_TR session, TPMA_SESSION flags, TPMA_SESSION mask) {
  return api.Esys_TRSess_SetAttributes(esysContext, session, flags, mask);
}
TSS2_RC frp_Esys_TR_SetAuth(ESYS_CONTEXT *esysContext, ESYS_TR handle, TPM2B_AUTH const *authValue) {
  return api.Esys_TR_SetAuth(esysContext, handle, authValue);
}
TSS2_RC frp_Esys_FlushContext(ESYS_CONTEXT *esysContext, ESYS_TR flushHandle) { return api.Esys_FlushContext(esysContext, flushHandle); }
TSS2_RC frp_Esys_CreatePrimary(
  ESYS_CONTEXT *esysContext, ESYS_TR primaryHandle, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3,
  const TPM2B_SENSITIVE_CREATE *inSensitive, const TPM2B_PUBLIC *inPublic, const TPM2B_DATA *outsideInfo,
  const TPML_PCR_SELECTION *creationPCR, ESYS_TR *objectHandle, TPM2B_PUBLIC **outPublic,
  TPM2B_CREATION_DATA **creationData, TPM2B_DIGEST **creationHash, TPMT_TK_CREATION **creationTicket) {
  return api.Esys_CreatePrimary(
    esysContext, primaryHandle, shandle1, shandle2, shandle3, inSensitive, inPublic, outsideInfo, creationPCR, objectHandle,
    outPublic, creationData, creationHash, creationTicket);
}
TSS2_RC frp_Esys_Create(
  ESYS_CONTEXT *esysContext, ESYS_TR parentHandle, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3,
  const TPM2B_SENSITIVE_CREATE *inSensitive, const TPM2B_PUBLIC *inPublic, const TPM2B_DATA *outsideInfo,
  const TPML_PCR_SELECTION *creationPCR, TPM2B_PRIVATE **outPrivate, TPM2B_PUBLIC **outPublic,
  TPM2B_CREATION_DATA **creationData, TPM2B_DIGEST **creationHash, TPMT_TK_CREATION **creationTicket) {
  return api.Esys_Create(
    esysContext, parentHandle, shandle1, shandle2, shandle3, inSensitive, inPublic, outsideInfo, creationPCR, outPrivate,
    outPublic, creationData, creationHash, creationTicket);
}
TSS2_RC frp_Esys_CreateLoaded(
  ESYS_CONTEXT *esysContext, ESYS_TR parentHandle, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3,
  const TPM2B_SENSITIVE_CREATE *inSensitive, const TPM2B_TEMPLATE *inPublic, ESYS_TR *objectHandle, TPM2B_PRIVATE **outPrivate,
  TPM2B_PUBLIC **outPublic) {
  return api.Esys_CreateLoaded(
    esysContext, parentHandle, shandle1, shandle2, shandle3, inSensitive, inPublic, objectHandle, outPrivate, outPublic);
}
TSS2_RC frp_Esys_Load(
  ESYS_CONTEXT *esysContext, ESYS_TR parentHandle, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3,
  const TPM2B_PRIVATE *inPrivate, const TPM2B_PUBLIC *inPublic, ESYS_TR *objectHandle) {
  return api.Esys_Load(esysContext, parentHandle, shandle1, shandle2, shandle3, inPrivate, inPublic, objectHandle);
}
TSS2_RC frp_Esys_Sign(
  ESYS_CONTEXT *esysContext, ESYS_TR keyHandle, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3,
  const TPM2B_DIGEST *digest, const TPMT_SIG_SCHEME *inScheme, const TPMT_TK_HASHCHECK *validation,
  TPMT_SIGNATURE **signature) {
  return api.Esys_Sign(esysContext, keyHandle, shandle1, shandle2, shandle3, digest, inScheme, validation, signature);
}
TSS2_RC frp_Esys_HMAC(
  ESYS_CONTEXT *esysContext, ESYS_TR handle, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3, const TPM2B_MAX_BUFFER *buffer,
  TPMI_ALG_HASH hashAlg, TPM2B_DIGEST **outHMAC) {
  return api.Esys_HMAC(esysContext, handle, shandle1, shandle2, shandle3, buffer, hashAlg, outHMAC);
}
TSS2_RC frp_Esys_DictionaryAttackParameters(
  ESYS_CONTEXT *esysContext, ESYS_TR lockHandle, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3,
  UINT32 newMaxTries, UINT32 newRecoveryTime, UINT32 lockoutRecovery) {
  return api.Esys_DictionaryAttackParameters(
    esysContext, lockHandle, shandle1, shandle2, shandle3, newMaxTries, newRecoveryTime, lockoutRecovery);
}
TSS2_RC frp_Esys_EvictControl(
  ESYS_CONTEXT *esysContext, ESYS_TR auth, ESYS_TR objectHandle, ESYS_TR shandle1, ESYS_TR shandle2,
  ESYS_TR shandle3, TPMI_DH_PERSISTENT persistentHandle, ESYS_TR *newObjectHandle) {
  return api.Esys_EvictControl(esysContext, auth, objectHandle, shandle1, shandle2, shandle3, persistentHandle, newObjectHandle);
}
TSS2_RC frp_Tss2_MU_TPMT_PUBLIC_Marshal(TPMT_PUBLIC const *src, uint8_t buffer[], size_t buffer_size, size_t *offset) {
  return api.Tss2_MU_TPMT_PUBLIC_Marshal(src, buffer, buffer_size, offset);
}
TSS2_RC frp_Tss2_MU_TPM2B_PUBLIC_Marshal(TPM2B_PUBLIC const *src, uint8_t buffer[], size_t buffer_size, size_t *offset) {
  return api.Tss2_MU_TPM2B_PUBLIC_Marshal(src, buffer, buffer_size, offset);
}
TSS2_RC frp_Tss2_MU_TPM2B_PUBLIC_Unmarshal(uint8_t const buffer[], size_t buffer_size, size_t *offset, TPM2B_PUBLIC *dest) {
  return api.Tss2_MU_TPM2B_PUBLIC_Unmarshal(buffer, buffer_size, offset, dest);
}
TSS2_RC frp_Tss2_MU_TPM2B_PRIVATE_Marshal(TPM2B_PRIVATE const *src, uint8_t buffer[], size_t buffer_size, size_t *offset) {
  return api.Tss2_MU_TPM2B_PRIVATE_Marshal(src, buffer, buffer_size, offset);
}
TSS2_RC frp_Tss2_MU_TPM2B_PRIVATE_Unmarshal(uint8_t const buffer[], size_t buffer_size, size_t *offset, TPM2B_PRIVATE *dest) {
  return api.Tss2_MU_TPM2B_PRIVATE_Unmarshal(buffer, buffer_size, offset, dest);
}
const char *frp_Tss2_RC_Decode(TSS2_RC rc) { return api.Tss2_RC_Decode(rc); }

TSS2_RC frp_Esys_NV_ReadPublic(
  ESYS_CONTEXT *esysContext, ESYS_TR nvIndex, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3,
  TPM2B_NV_PUBLIC **nvPublic, TPM2B_NAME **nvName) {
  return api.Esys_NV_ReadPublic(esysContext, nvIndex, shandle1, shandle2, shandle3, nvPublic, nvName);
}
TSS2_RC frp_Esys_NV_Read(
  ESYS_CONTEXT *esysContext, ESYS_TR authHandle, ESYS_TR nvIndex, ESYS_TR shandle1, ESYS_TR shandle2,
  ESYS_TR shandle3, UINT16 size, UINT16 offset, TPM2B_MAX_NV_BUFFER **data) {
  return api.Esys_NV_Read(esysContext, authHandle, nvIndex, shandle1, shandle2, shandle3, size, offset, data);
}
TSS2_RC frp_Esys_StartAuthSession(
  ESYS_CONTEXT *esysContext, ESYS_TR tpmKey, ESYS_TR bind, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3,
  const TPM2B_NONCE *nonceCaller, TPM2_SE sessionType, const TPMT_SYM_DEF *symmetric, TPMI_ALG_HASH authHash,
  ESYS_TR *sessionHandle) {
  return api.Esys_StartAuthSession(
    esysContext, tpmKey, bind, shandle1, shandle2, shandle3, nonceCaller, sessionType, symmetric, authHash, sessionHandle);
}
TSS2_RC frp_Esys_PolicySecret(
  ESYS_CONTEXT *esysContext, ESYS_TR authHandle, ESYS_TR policySession, ESYS_TR shandle1, ESYS_TR shandle2,
  ESYS_TR shandle3, const TPM2B_NONCE *nonceTPM, const TPM2B_DIGEST *cpHashA, const TPM2B_NONCE *policyRef,
  INT32 expiration, TPM2B_TIMEOUT **timeout, TPMT_TK_AUTH **policyTicket) {
  return api.Esys_PolicySecret(
    esysContext, authHandle, policySession, shandle1, shandle2, shandle3, nonceTPM, cpHashA, policyRef, expiration, timeout,
    policyTicket);
}
TSS2_RC frp_Esys_ActivateCredential(
  ESYS_CONTEXT *esysContext, ESYS_TR activateHandle, ESYS_TR keyHandle, ESYS_TR shandle1, ESYS_TR shandle2,
  ESYS_TR shandle3, const TPM2B_ID_OBJECT *credentialBlob, const TPM2B_ENCRYPTED_SECRET *secret, TPM2B_DIGEST **certInfo) {
  return api.Esys_ActivateCredential(
    esysContext, activateHandle, keyHandle, shandle1, shandle2, shandle3, credentialBlob, secret, certInfo);
}
TSS2_RC frp_Esys_Certify(
  ESYS_CONTEXT *esysContext, ESYS_TR objectHandle, ESYS_TR signHandle, ESYS_TR shandle1, ESYS_TR shandle2,
  ESYS_TR shandle3, const TPM2B_DATA *qualifyingData, const TPMT_SIG_SCHEME *inScheme, TPM2B_ATTEST **certifyInfo,
  TPMT_SIGNATURE **signature) {
  return api.Esys_Certify(
    esysContext, objectHandle, signHandle, shandle1, shandle2, shandle3, qualifyingData, inScheme, certifyInfo, signature);
}
TSS2_RC frp_Esys_Quote(
  ESYS_CONTEXT *esysContext, ESYS_TR signHandle, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3,
  const TPM2B_DATA *qualifyingData, const TPMT_SIG_SCHEME *inScheme, const TPML_PCR_SELECTION *PCRselect,
  TPM2B_ATTEST **quoted, TPMT_SIGNATURE **signature) {
  return api.Esys_Quote(esysContext, signHandle, shandle1, shandle2, shandle3, qualifyingData, inScheme, PCRselect, quoted, signature);
}
TSS2_RC frp_Esys_PCR_Read(
  ESYS_CONTEXT *esysContext, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3, const TPML_PCR_SELECTION *pcrSelectionIn,
  UINT32 *pcrUpdateCounter, TPML_PCR_SELECTION **pcrSelectionOut, TPML_DIGEST **pcrValues) {
  return api.Esys_PCR_Read(esysContext, shandle1, shandle2, shandle3, pcrSelectionIn, pcrUpdateCounter, pcrSelectionOut, pcrValues);
}
