/* tgc devices: the devices --devices can name, with their memory. */
#include "tools/cli.h"

#include "support/parse_size.h"

#include <stdio.h>
#include <string.h>

static const char devices_usage[] =
    "usage: tgc devices [--format table|json]\n"
    "\n"
    "Lists cpu and every gpuN (OpenCL GPUs in platform order; where there is no GPU,\n"
    "the other OpenCL devices, such as PoCL's CPU device, serve as gpu0...), with\n"
    "name, platform, type, the ISA its kernels use (the cpu: the widest vector ISA it\n"
    "has, capped by TGC_CPU_ISA=sse2|avx2|avx512; gpus: opencl), compute units and\n"
    "total / used / free memory.\n"
    "Under mpirun every rank lists its own and rank 0 prints them all, each named as\n"
    "--devices names it there (/task:1/cpu, docs/distributed.md).\n";

static void json_string(const char *s) {
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20) printf("\\u%04x", *s);
        else putchar(*s);
    }
    putchar('"');
}

int tgc_cmd_devices(int argc, char **argv) {
    const char *format = "table";
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(devices_usage, stdout);
            return TGC_EXIT_OK;
        }
        if (strcmp(argv[i], "--format") == 0 && i + 1 < argc) format = argv[++i];
        else return tgc_usage_error("devices", "unknown argument '%s'", argv[i]);
    }
    if (strcmp(format, "table") != 0 && strcmp(format, "json") != 0)
        return tgc_usage_error("devices", "unknown format '%s' (table or json)", format);
    enum { MAX_LISTED = 17 * 64 };
    static tgc_device_info info[MAX_LISTED];
    static int task[MAX_LISTED];
    int n;
    if (tgc_distributed_size() > 1) {
        tgc_diags *d = tgc_diags_create();
        n = tgc_distributed_devices(info, task, MAX_LISTED, d);
        tgc_diags_print(d, stderr);
        tgc_diags_free(d);
        if (n < 0) return TGC_EXIT_FAILED;
        if (tgc_distributed_rank() != 0) return TGC_EXIT_OK; /* rank 0 prints */
    } else {
        n = tgc_devices_list(info, 17);
    }
    int width = tgc_distributed_size() > 1 ? 13 : 6;
    static char label[MAX_LISTED][32];
    for (int i = 0; i < n; i++)
        if (tgc_distributed_size() > 1 && task[i] > 0) snprintf(label[i], sizeof label[i], "/task:%d/%.15s", task[i] % 100000, info[i].name);
        else snprintf(label[i], sizeof label[i], "%.15s", info[i].name);
    if (strcmp(format, "json") == 0) {
        printf("[\n");
        for (int i = 0; i < n; i++) {
            printf("  {\"name\": ");
            json_string(label[i]);
            printf(", \"description\": ");
            json_string(info[i].description);
            printf(", \"platform\": ");
            json_string(info[i].platform);
            printf(", \"type\": ");
            json_string(info[i].type);
            printf(", \"isa\": ");
            json_string(info[i].isa);
            printf(", \"compute_units\": %u, \"total_bytes\": %lld, \"used_bytes\": %lld, \"free_bytes\": %lld}%s\n",
                   info[i].compute_units, (long long)info[i].total_memory, (long long)info[i].used_memory,
                   (long long)info[i].free_memory, i + 1 < n ? "," : "");
        }
        printf("]\n");
        return TGC_EXIT_OK;
    }
    printf("%-*s %-40s %-30s %-5s %-6s %5s %11s %11s %11s\n", width, "device", "name", "platform", "type", "isa", "units",
           "total", "used", "free");
    for (int i = 0; i < n; i++) {
        char total[32], used[32], free_[32];
        tgc_format_size(info[i].total_memory, total, sizeof total);
        tgc_format_size(info[i].used_memory, used, sizeof used);
        tgc_format_size(info[i].free_memory, free_, sizeof free_);
        printf("%-*s %-40.40s %-30.30s %-5s %-6s %5u %11s %11s %11s\n", width, label[i], info[i].description,
               info[i].platform, info[i].type, info[i].isa, info[i].compute_units, total, used, free_);
    }
    if (n == 1) printf("(no OpenCL device: only cpu is available)\n");
    return TGC_EXIT_OK;
}
