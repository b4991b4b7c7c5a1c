/* The tgc command line: one file per command, each a user of include/tgc.h. */
#ifndef TGC_TOOLS_CLI_H
#define TGC_TOOLS_CLI_H

#include "tgc.h"

#include <stdbool.h>

/* Exit codes shared by every command. */
enum {
    TGC_EXIT_OK = 0,
    TGC_EXIT_FAILED = 1, /* the run failed (kernel, device, memory limit) */
    TGC_EXIT_USAGE = 2,  /* bad command line or an invalid graph file */
};

/* Each command gets argv after its name; returns an exit code. */
int tgc_cmd_compile(int argc, char **argv);
int tgc_cmd_run(int argc, char **argv);
int tgc_cmd_devices(int argc, char **argv);
int tgc_cmd_import(int argc, char **argv);

/* Prints "tgc: error: MESSAGE" and a one-line hint to stderr; returns 2. */
int tgc_usage_error(const char *command, const char *fmt, ...);

/* Parses `--optimize`'s value "0", "1" or "2" into *level; false if it is
 * none of them. */
bool tgc_parse_optimize_level(const char *text, tgc_optimize_level *level);

/* Writes `write(file, ctx)`'s output to `path` atomically: to a temporary
 * file in the same directory, renamed into place only on success, so a
 * failure leaves no half-written file. Returns 0 or an errno-style code. */
int tgc_write_atomically(const char *path, int (*write)(FILE *f, void *ctx), void *ctx);

#endif
