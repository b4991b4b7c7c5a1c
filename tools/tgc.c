/* tgc: the command line. Dispatches to one command per file. */
#include "tools/cli.h"

#include "devices/cpu/blas_threads.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: tgc COMMAND [ARGS]\n"
    "\n"
    "Commands:\n"
    "  compile MODEL.yaml   load, validate and shape-infer a graph; dump what the next stage gets\n"
    "  run MODEL.yaml       run a graph on .npy inputs and report its outputs and timing\n"
    "  devices              list the devices (cpu, gpuN) with their memory\n"
    "  import MODEL.onnx    convert an ONNX model into a tgc/1 graph file with its weights\n"
    "\n"
    "Options:\n"
    "  -h, --help           show this help (tgc COMMAND --help for a command's)\n"
    "  --version            show the version\n"
    "\n"
    "Exit status: 0 success, 1 the run failed, 2 bad command line or invalid graph.\n";

bool tgc_parse_optimize_level(const char *text, tgc_optimize_level *level) {
    static const tgc_optimize_level levels[] = {TGC_OPTIMIZE_NONE, TGC_OPTIMIZE_BASIC, TGC_OPTIMIZE_ALL};
    if (text[0] < '0' || text[0] > '2' || text[1] != '\0') return false;
    *level = levels[text[0] - '0'];
    return true;
}

bool tgc_parse_placement(const char *text, tgc_placement_mode *mode) {
    if (strcmp(text, "auto") == 0) *mode = TGC_PLACEMENT_AUTO;
    else if (strcmp(text, "rules") == 0) *mode = TGC_PLACEMENT_RULES;
    else return false;
    return true;
}

int tgc_usage_error(const char *command, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("tgc: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fprintf(stderr, "hint: run 'tgc %s%s--help' for usage\n", command ? command : "", command ? " " : "");
    return TGC_EXIT_USAGE;
}

int main(int argc, char **argv) {
    if (argc < 2) return tgc_usage_error(NULL, "no command given");
    const char *cmd = argv[1];
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
        fputs(usage, stdout);
        return TGC_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("tgc %s\n", TGC_VERSION_STRING);
        return TGC_EXIT_OK;
    }
    /* This process's OpenBLAS threads stop now rather than at the first
     * session: until then they spin through the model's load (a session
     * sets its own count). */
    tgc_cpu_blas_threads(1);
    if (strcmp(cmd, "compile") == 0) return tgc_cmd_compile(argc - 2, argv + 2);
    if (strcmp(cmd, "run") == 0 || strcmp(cmd, "devices") == 0) {
        /* Started by mpirun: every rank joins (docs/distributed.md). */
        bool mpi = getenv("OMPI_COMM_WORLD_SIZE") != NULL || getenv("PMIX_RANK") != NULL;
        if (mpi) {
            tgc_diags *d = tgc_diags_create();
            tgc_status st = d != NULL ? tgc_distributed_init(d) : TGC_ERR_NOMEM;
            tgc_diags_print(d, stderr);
            tgc_diags_free(d);
            if (st != TGC_OK) return TGC_EXIT_FAILED;
        }
        int rc = strcmp(cmd, "run") == 0 ? tgc_cmd_run(argc - 2, argv + 2) : tgc_cmd_devices(argc - 2, argv + 2);
        if (mpi) tgc_distributed_finalize(rc != TGC_EXIT_OK);
        return rc;
    }
    if (strcmp(cmd, "import") == 0) return tgc_cmd_import(argc - 2, argv + 2);
    return tgc_usage_error(NULL, "unknown command '%s'", cmd);
}
