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

/* --placement's value: "rules" or "auto" into *mode; false for anything else. */
bool tgc_parse_placement(const char *text, tgc_placement_mode *mode);

/* The file name (without ".npy") a tensor named `name` is written under or
 * read from (tgc run's --output-dir files, --input-dir's folders): each
 * byte outside [A-Za-z0-9_.-], and a leading '.', as %XX ("onnx::Flatten_0"
 * is "onnx%3A%3AFlatten_0"); past 200 bytes, the first 191 then '~' and the
 * name's FNV-1a hash in 8 hex digits (tools/cmd_run.c). */
void tgc_file_stem(const char *name, char *out, size_t size);

/* Writes `write(file, ctx)`'s output to `path` atomically: to a temporary
 * file in the same directory, renamed into place only on success, so a
 * failure leaves no half-written file. Returns 0 or an errno-style code. */
int tgc_write_atomically(const char *path, int (*write)(FILE *f, void *ctx), void *ctx);

#endif
