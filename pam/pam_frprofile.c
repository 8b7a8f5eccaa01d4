/*
 * pam_frprofile: sign in to Linux with a PingAM journey.
 *
 * The module is small on purpose: no Swift runtime, no JSON, no HTTP inside sshd, login, sudo
 * or a display manager. For each sign-in it starts the fr-profile helper (`fr-profile signin
 * pam-helper`) as root with a clean environment and no controlling terminal, and relays the
 * PAM conversation over a socketpair: the helper reads the configuration, walks the journey
 * and decides; the module shows what it is told, asks what it is asked, and returns the
 * helper's verdict. A helper that does not finish within its deadline is killed, so a hung
 * server never hangs a login.
 *
 * Messages are SOCK_SEQPACKET records: one type byte, then the payload.
 *   module -> helper  'S' start: NUL-terminated key=value fields (config, user, service, tty,
 *                          rhost, ruser, authtok, firstpass)
 *                     'A' an answer (the text typed), 'N' no answer (the conversation failed)
 *   helper -> module  'T' seconds: the deadline of the whole sign-in, from now
 *                     'P' / 'E' a prompt, echo off / on: the module answers with 'A' or 'N'
 *                     'I' / 'W' a text to show (PAM_TEXT_INFO / PAM_ERROR_MSG)
 *                     'L' a line for the system log: its syslog priority digit, then the text
 *                          (written with pam_syslog, under the service's name; never a secret)
 *                     'D' done: the PAM status in decimal, a NUL, PAM_AUTHTOK to set (empty:
 *                          none), and optionally a NUL and "held": the helper holds OAuth 2.0
 *                          tokens for the user and waits for the session
 *   module -> helper  'O' the session opens (pam_sm_open_session): the helper writes the tokens
 *                          into the user's own token store, as the user, and answers 'D' with
 *                          its status; the socket closing instead (pam_end) discards them
 *
 * Arguments: config=PATH (default /etc/fr-profile/signin.json), helper=PATH (default the
 * installed fr-profile), use_first_pass, try_first_pass, debug (the helper's debug lines logged too).
 */
#define _GNU_SOURCE
#define PAM_SM_AUTH
#define PAM_SM_ACCOUNT
#define PAM_SM_SESSION
#define PAM_SM_PASSWORD

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <security/pam_appl.h>
#include <security/pam_ext.h>
#include <security/pam_modules.h>

#ifndef FRPROFILE_HELPER
#define FRPROFILE_HELPER "/usr/bin/fr-profile"
#endif
#define DEFAULT_CONFIG "/etc/fr-profile/signin.json"
#define DATA_AUTHENTICATED "pam_frprofile_authenticated"
#define DATA_HELPER "pam_frprofile_helper"
/* Seconds the session's token write may take. */
#define SESSION_SECONDS 30

/* A helper that holds the user's tokens until the session opens. */
struct held_helper {
  int fd;
  pid_t pid;
};
/* The largest message either side sends. */
#define MESSAGE_MAX 65536
/* Seconds the helper has to say its deadline; and past that deadline, before it is killed. */
#define START_SECONDS 30
#define GRACE_SECONDS 5

struct options {
  const char *config;
  const char *helper;
  int use_first_pass;
  int try_first_pass;
  int debug;
};

static int parse_options(pam_handle_t *pamh, int argc, const char **argv, struct options *options) {
  options->config = DEFAULT_CONFIG;
  options->helper = FRPROFILE_HELPER;
  options->use_first_pass = options->try_first_pass = options->debug = 0;
  for (int i = 0; i < argc; i++) {
    if (strncmp(argv[i], "config=", 7) == 0 && argv[i][7] == '/') {
      options->config = argv[i] + 7;
    } else if (strncmp(argv[i], "helper=", 7) == 0 && argv[i][7] == '/') {
      options->helper = argv[i] + 7;
    } else if (strcmp(argv[i], "use_first_pass") == 0) {
      options->use_first_pass = 1;
    } else if (strcmp(argv[i], "try_first_pass") == 0) {
      options->try_first_pass = 1;
    } else if (strcmp(argv[i], "debug") == 0) {
      options->debug = 1;
    } else {
      pam_syslog(pamh, LOG_ERR, "unknown argument %s (config=/PATH, helper=/PATH, use_first_pass, try_first_pass, debug)",
                 argv[i]);
      return -1;
    }
  }
  return 0;
}

static double monotonic_seconds(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

/* Appends key=value and a NUL to buffer; 0 when it does not fit. */
static int add_field(char *buffer, size_t *length, const char *key, const char *value) {
  size_t needed = strlen(key) + 1 + strlen(value) + 1;
  if (*length + needed > MESSAGE_MAX) return 0;
  *length += (size_t)snprintf(buffer + *length, MESSAGE_MAX - *length, "%s=%s", key, value) + 1;
  return 1;
}

static const char *item(pam_handle_t *pamh, int type) {
  const void *value = NULL;
  if (pam_get_item(pamh, type, &value) != PAM_SUCCESS || value == NULL) return "";
  return (const char *)value;
}

/* Sends one record; 0 on failure. */
static int send_record(int fd, char type, const char *payload, size_t length) {
  char *record = malloc(length + 1);
  if (record == NULL) return 0;
  record[0] = type;
  if (length > 0) memcpy(record + 1, payload, length);
  ssize_t sent;
  do { sent = send(fd, record, length + 1, MSG_NOSIGNAL); } while (sent < 0 && errno == EINTR);
  explicit_bzero(record, length + 1);
  free(record);
  return sent == (ssize_t)(length + 1);
}

/* Starts the helper with the socket as descriptor 3; its pid, or -1. Between fork and exec
 * only async-signal-safe calls: the caller may have threads (a display manager). */
static pid_t start_helper(const char *helper, int socket_fd) {
  static char *const environment[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8", NULL};
  char *const arguments[] = {"fr-profile", "signin", "pam-helper", NULL};
  pid_t pid = fork();
  if (pid != 0) return pid;
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  for (int sig = 1; sig < NSIG; sig++) signal(sig, SIG_DFL);
  setsid(); /* no controlling terminal: the helper talks to the person only through PAM */
  int null = open("/dev/null", O_RDWR);
  if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0) _exit(127);
  if (dup2(socket_fd, 3) < 0) _exit(127);
#ifdef SYS_close_range
  if (syscall(SYS_close_range, 4U, ~0U, 0U) != 0)
#endif
  {
    long max = sysconf(_SC_OPEN_MAX);
    for (long fd = 4; fd < (max > 0 ? max : 65536); fd++) close((int)fd);
  }
  execve(helper, arguments, environment);
  _exit(127);
}

/* Asks the person through the PAM conversation; the answer (to free), or NULL. */
static char *ask(pam_handle_t *pamh, int style, const char *prompt) {
  char *answer = NULL;
  if (pam_prompt(pamh, style, &answer, "%s", prompt) != PAM_SUCCESS) {
    if (answer != NULL) {
      explicit_bzero(answer, strlen(answer));
      free(answer);
    }
    return NULL;
  }
  return answer != NULL ? answer : strdup("");
}

/* Closes the socket (the helper then discards what it holds and ends) and reaps the helper,
 * killing it if it has not ended within two seconds. */
static void cleanup_helper(pam_handle_t *pamh, void *data, int status) {
  (void)pamh;
  (void)status;
  struct held_helper *held = data;
  close(held->fd);
  int child_status;
  for (int tries = 0; tries < 200; tries++) {
    pid_t done = waitpid(held->pid, &child_status, WNOHANG);
    if (done == held->pid || (done < 0 && errno != EINTR)) {
      free(held);
      return;
    }
    struct timespec pause = {0, 10000000};
    nanosleep(&pause, NULL);
  }
  kill(held->pid, SIGKILL);
  while (waitpid(held->pid, &child_status, 0) < 0 && errno == EINTR) {
  }
  free(held);
}

static void cleanup_flag(pam_handle_t *pamh, void *data, int status) {
  (void)pamh;
  (void)status;
  free(data);
}

PAM_EXTERN int pam_sm_authenticate(pam_handle_t *pamh, int flags, int argc, const char **argv) {
  (void)flags;
  struct options options;
  if (parse_options(pamh, argc, argv, &options) != 0) return PAM_AUTH_ERR;
  const char *user = NULL;
  if (pam_get_user(pamh, &user, NULL) != PAM_SUCCESS || user == NULL || user[0] == '\0') return PAM_USER_UNKNOWN;
  struct passwd entry, *found = NULL;
  char buffer[4096];
  if (getpwnam_r(user, &entry, buffer, sizeof buffer, &found) != 0 || found == NULL) {
    if (options.debug) pam_syslog(pamh, LOG_DEBUG, "%s is not a user of this machine", user);
    return PAM_USER_UNKNOWN;
  }
  if (found->pw_uid == 0) return PAM_IGNORE; /* root is never handled: its sign-in stays local */

  char *start = calloc(1, MESSAGE_MAX);
  if (start == NULL) return PAM_BUF_ERR;
  size_t length = 0;
  const char *authtok = "";
  if (options.use_first_pass || options.try_first_pass) authtok = item(pamh, PAM_AUTHTOK);
  int fits = add_field(start, &length, "config", options.config) && add_field(start, &length, "user", user) &&
             add_field(start, &length, "service", item(pamh, PAM_SERVICE)) &&
             add_field(start, &length, "tty", item(pamh, PAM_TTY)) && add_field(start, &length, "rhost", item(pamh, PAM_RHOST)) &&
             add_field(start, &length, "ruser", item(pamh, PAM_RUSER)) && add_field(start, &length, "authtok", authtok) &&
             add_field(start, &length, "firstpass",
                       options.use_first_pass ? "use" : (options.try_first_pass ? "try" : ""));
  if (!fits) {
    explicit_bzero(start, MESSAGE_MAX);
    free(start);
    pam_syslog(pamh, LOG_ERR, "the sign-in request for %s is too large", user);
    return PAM_AUTH_ERR;
  }

  int pair[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
    free(start);
    pam_syslog(pamh, LOG_ERR, "socketpair: %m");
    return PAM_AUTHINFO_UNAVAIL;
  }
  pid_t pid = start_helper(options.helper, pair[1]);
  close(pair[1]);
  if (pid < 0) {
    close(pair[0]);
    free(start);
    pam_syslog(pamh, LOG_ERR, "cannot start %s: %m", options.helper);
    return PAM_AUTHINFO_UNAVAIL;
  }
  int sent = send_record(pair[0], 'S', start, length);
  explicit_bzero(start, MESSAGE_MAX);
  free(start);

  int status = PAM_AUTH_ERR;
  int finished = 0;
  int holds_tokens = 0;
  double deadline = monotonic_seconds() + START_SECONDS;
  char *message = malloc(MESSAGE_MAX + 1);
  while (sent && message != NULL && !finished) {
    double left = deadline - monotonic_seconds();
    if (left <= 0) {
      pam_syslog(pamh, LOG_ERR, "the sign-in of %s did not end in time: the helper was stopped", user);
      break;
    }
    struct pollfd waiting = {.fd = pair[0], .events = POLLIN};
    int ready = poll(&waiting, 1, (int)(left * 1000) + 1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    ssize_t received = recv(pair[0], message, MESSAGE_MAX, 0);
    if (received < 0 && errno == EINTR) continue;
    if (received <= 0) {
      pam_syslog(pamh, LOG_ERR, "the helper %s ended without an answer for %s", options.helper, user);
      break;
    }
    message[received] = '\0';
    const char *payload = message + 1;
    switch (message[0]) {
    case 'T': {
      long seconds = strtol(payload, NULL, 10);
      if (seconds > 0 && seconds <= 86400) deadline = monotonic_seconds() + (double)seconds + GRACE_SECONDS;
      break;
    }
    case 'P':
    case 'E': {
      char *answer = ask(pamh, message[0] == 'P' ? PAM_PROMPT_ECHO_OFF : PAM_PROMPT_ECHO_ON, payload);
      if (answer == NULL) {
        sent = send_record(pair[0], 'N', "", 0);
      } else {
        sent = send_record(pair[0], 'A', answer, strlen(answer));
        explicit_bzero(answer, strlen(answer));
        free(answer);
      }
      break;
    }
    case 'I': pam_info(pamh, "%s", payload); break;
    case 'L': {
      int priority = payload[0] >= '0' && payload[0] <= '7' ? payload[0] - '0' : LOG_NOTICE;
      if (priority == LOG_DEBUG && !options.debug) break;
      pam_syslog(pamh, priority, "%s", payload[0] != '\0' ? payload + 1 : payload);
      break;
    }
    case 'W': pam_error(pamh, "%s", payload); break;
    case 'D': {
      const char *end = message + received;
      long code = strtol(payload, NULL, 10);
      size_t code_length = strlen(payload);
      const char *token = payload + code_length + 1;
      const char *flags = token < end ? token + strlen(token) + 1 : end;
      holds_tokens = flags < end && strcmp(flags, "held") == 0;
      finished = 1;
      switch (code) {
      case PAM_SUCCESS:
      case PAM_AUTH_ERR:
      case PAM_USER_UNKNOWN:
      case PAM_AUTHINFO_UNAVAIL:
      case PAM_IGNORE:
      case PAM_MAXTRIES: status = (int)code; break;
      default: status = PAM_AUTH_ERR; break;
      }
      if (status == PAM_SUCCESS && (size_t)received > 1 + code_length + 1 && token[0] != '\0') {
        if (pam_set_item(pamh, PAM_AUTHTOK, token) != PAM_SUCCESS) pam_syslog(pamh, LOG_ERR, "cannot set PAM_AUTHTOK");
      }
      break;
    }
    default:
      pam_syslog(pamh, LOG_ERR, "the helper sent a message of unknown type %d", message[0]);
      finished = 1;
      status = PAM_AUTH_ERR;
      break;
    }
  }
  if (message != NULL) {
    explicit_bzero(message, MESSAGE_MAX + 1);
    free(message);
  }
  if (finished && status == PAM_SUCCESS && holds_tokens) {
    /* The helper keeps the tokens until pam_sm_open_session (or pam_end) */
    struct held_helper *held = malloc(sizeof *held);
    if (held != NULL) {
      held->fd = pair[0];
      held->pid = pid;
    }
    if (held == NULL || pam_set_data(pamh, DATA_HELPER, held, cleanup_helper) != PAM_SUCCESS) {
      if (held != NULL) cleanup_helper(pamh, held, 0);
      else {
        close(pair[0]);
        kill(pid, SIGKILL);
        int child_status;
        while (waitpid(pid, &child_status, 0) < 0 && errno == EINTR) {
        }
      }
    }
  } else {
    close(pair[0]);
    if (!finished) kill(pid, SIGKILL);
    int child_status;
    while (waitpid(pid, &child_status, 0) < 0 && errno == EINTR) {
    }
  }
  if (status == PAM_SUCCESS) {
    char *flag = strdup(user);
    if (flag == NULL || pam_set_data(pamh, DATA_AUTHENTICATED, flag, cleanup_flag) != PAM_SUCCESS) {
      free(flag);
      return PAM_BUF_ERR;
    }
  }
  if (options.debug) pam_syslog(pamh, LOG_DEBUG, "sign-in of %s: %s", user, pam_strerror(pamh, status));
  return status;
}

/* sshd calls it on the auth stack and drops the connection unless it succeeds. */
PAM_EXTERN int pam_sm_setcred(pam_handle_t *pamh, int flags, int argc, const char **argv) {
  (void)pamh;
  (void)flags;
  (void)argc;
  (void)argv;
  return PAM_SUCCESS;
}

/* Succeeds for the user this module signed in; others (an SSH key) are not its to judge. */
PAM_EXTERN int pam_sm_acct_mgmt(pam_handle_t *pamh, int flags, int argc, const char **argv) {
  (void)flags;
  (void)argc;
  (void)argv;
  const void *data = NULL;
  const char *user = NULL;
  if (pam_get_data(pamh, DATA_AUTHENTICATED, &data) != PAM_SUCCESS || data == NULL) return PAM_IGNORE;
  if (pam_get_user(pamh, &user, NULL) != PAM_SUCCESS || user == NULL) return PAM_IGNORE;
  return strcmp((const char *)data, user) == 0 ? PAM_SUCCESS : PAM_IGNORE;
}

/* Has the helper that signed the user in write their OAuth 2.0 tokens into their own token
 * store, as the user (the home exists by now: pam_mkhomedir runs before). The session opens
 * whatever happens to the tokens; a failure is logged. */
PAM_EXTERN int pam_sm_open_session(pam_handle_t *pamh, int flags, int argc, const char **argv) {
  (void)flags;
  (void)argc;
  (void)argv;
  const void *data = NULL;
  if (pam_get_data(pamh, DATA_HELPER, &data) != PAM_SUCCESS || data == NULL) return PAM_SUCCESS;
  const struct held_helper *held = data;
  const char *user = NULL;
  if (pam_get_user(pamh, &user, NULL) != PAM_SUCCESS || user == NULL) user = "";
  int written = 0;
  if (send_record(held->fd, 'O', user, strlen(user))) {
    double deadline = monotonic_seconds() + SESSION_SECONDS;
    char reply[256];
    while (!written) {
      double left = deadline - monotonic_seconds();
      if (left <= 0) break;
      struct pollfd waiting = {.fd = held->fd, .events = POLLIN};
      int ready = poll(&waiting, 1, (int)(left * 1000) + 1);
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) break;
      ssize_t received = recv(held->fd, reply, sizeof reply - 1, 0);
      if (received < 0 && errno == EINTR) continue;
      if (received <= 0) break;
      reply[received] = '\0';
      if (reply[0] == 'L') {
        int priority = reply[1] >= '0' && reply[1] <= '7' ? reply[1] - '0' : LOG_NOTICE;
        pam_syslog(pamh, priority, "%s", reply[1] != '\0' ? reply + 2 : reply + 1);
      } else if (reply[0] == 'D') {
        written = strtol(reply + 1, NULL, 10) == 0 ? 1 : -1;
      }
    }
  }
  if (written != 1) pam_syslog(pamh, LOG_ERR, "the OAuth 2.0 tokens of %s were not written to their token store", user);
  pam_set_data(pamh, DATA_HELPER, NULL, NULL); /* the old data's cleanup ends the helper */
  return PAM_SUCCESS;
}

PAM_EXTERN int pam_sm_close_session(pam_handle_t *pamh, int flags, int argc, const char **argv) {
  (void)pamh;
  (void)flags;
  (void)argc;
  (void)argv;
  return PAM_SUCCESS;
}

PAM_EXTERN int pam_sm_chauthtok(pam_handle_t *pamh, int flags, int argc, const char **argv) {
  (void)pamh;
  (void)flags;
  (void)argc;
  (void)argv;
  return PAM_IGNORE;
}
