/*
 * smaps-at-exit OUTDIR COMMAND [ARG...]: runs COMMAND under ptrace and, when it exits (the
 * PTRACE_EVENT_EXIT stop, before the kernel tears down its memory), copies its /proc/PID/smaps
 * and /proc/PID/status to OUTDIR and writes OUTDIR/pages: for every mapping one line
 * "START END PAGE..." (hex addresses; then the index within the mapping of every page that is
 * present, from /proc/PID/pagemap, prefixed "a" when it is anonymous: a private copy). Then lets it exit and returns its exit status. Used by
 * bench/collect-smaps.sh; ptrace changes none of the tracee's memory.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

static void copy_file(const char *from, const char *to) {
  FILE *in = fopen(from, "r"), *out = fopen(to, "w");
  if (!in || !out) { perror(from); exit(2); }
  char buffer[65536];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, in)) > 0) fwrite(buffer, 1, n, out);
  fclose(in);
  fclose(out);
}

static void write_pages(pid_t pid, const char *to) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
  FILE *maps = fopen(path, "r"), *out = fopen(to, "w");
  snprintf(path, sizeof path, "/proc/%d/pagemap", (int)pid);
  int pagemap = open(path, O_RDONLY);
  if (!maps || !out || pagemap < 0) { perror(path); exit(2); }
  long page = sysconf(_SC_PAGESIZE);
  char line[4096];
  while (fgets(line, sizeof line, maps)) {
    uint64_t start, end;
    if (sscanf(line, "%" SCNx64 "-%" SCNx64, &start, &end) != 2) continue;
    fprintf(out, "%" PRIx64 " %" PRIx64, start, end);
    for (uint64_t address = start; address < end; address += (uint64_t)page) {
      uint64_t entry;
      if (pread(pagemap, &entry, sizeof entry, (off_t)(address / (uint64_t)page * sizeof entry)) != sizeof entry) break;
      /* bit 63 present; bit 61 file page or shared anonymous (clear: a private copy, "a") */
      if (entry & (1ULL << 63))
        fprintf(out, " %s%" PRIu64, entry & (1ULL << 61) ? "" : "a", (address - start) / (uint64_t)page);
    }
    fputc('\n', out);
  }
  close(pagemap);
  fclose(maps);
  fclose(out);
}

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: smaps-at-exit OUTDIR COMMAND [ARG...]\n"); return 2; }
  pid_t child = fork();
  if (child == 0) {
    ptrace(PTRACE_TRACEME, 0, 0, 0);
    execvp(argv[2], argv + 2);
    perror(argv[2]);
    _exit(127);
  }
  int status;
  waitpid(child, &status, 0); /* the SIGTRAP after execve */
  ptrace(PTRACE_SETOPTIONS, child, 0, PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL);
  ptrace(PTRACE_CONT, child, 0, 0);
  for (;;) {
    if (waitpid(child, &status, 0) < 0) { perror("waitpid"); return 2; }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    int signal = 0;
    if (status >> 8 == (SIGTRAP | (PTRACE_EVENT_EXIT << 8))) {
      char from[64], to[4096];
      snprintf(from, sizeof from, "/proc/%d/smaps", (int)child);
      snprintf(to, sizeof to, "%s/smaps", argv[1]);
      copy_file(from, to);
      snprintf(from, sizeof from, "/proc/%d/status", (int)child);
      snprintf(to, sizeof to, "%s/status", argv[1]);
      copy_file(from, to);
      snprintf(to, sizeof to, "%s/pages", argv[1]);
      write_pages(child, to);
    } else if (WIFSTOPPED(status)) {
      signal = WSTOPSIG(status) == SIGTRAP ? 0 : WSTOPSIG(status);
    }
    ptrace(PTRACE_CONT, child, 0, signal);
  }
}
