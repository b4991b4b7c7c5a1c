/* Backends: one table per device kind. Everything tgc knows about a kind
 * of device lives in its table: how its devices are named, how much the
 * placer prefers it, whether its memory is host memory, how its devices
 * are listed and opened, and which kernels it has. The stages above
 * devices/ (placer, partition, executor, passes) ask the tables and never
 * name a kind. Private to the library.
 *
 * The models are ggml's backend registry (ggml-backend-impl.h: a device's
 * type is a property of its backend, a new backend is one registration)
 * and ONNX Runtime's execution providers (a kernel registry per provider,
 * GetCapability). A device kind is the position of its backend in the one
 * list (devices/backends.c): 0 is the host's cpu, then the kinds built in
 * (OpenCL's gpuN under TGC_OPENCL), then kinds registered at run time
 * (tgc_backend_register: tests/devices/sim_backend.c is one).
 *
 * Example usage (a kind of device, in devices/KIND/KIND_backend.c):
 *     static const tgc_kernel_def *const families[] = {tgc_npu_kernels_nn, NULL};
 *     const tgc_backend tgc_npu_backend = {
 *         .name = "npu", .prefix = "npu", .priority = 20, .host_memory = false,
 *         .alignment = 256, .default_threads = one_thread, .list = npu_list,
 *         .open = npu_open, .families = families};
 * and listing &tgc_npu_backend in devices/backends.c.
 */
#ifndef TGC_DEVICES_BACKEND_H
#define TGC_DEVICES_BACKEND_H

#include "tgc.h"

#include "graph/graph.h"

#include <stdbool.h>
#include <stddef.h>

/* A device kind: its backend's position in the backend list. */
typedef int tgc_device_kind;

/* The kinds of the backends built into every library, for devices/ and
 * its tests; the stages above devices/ never use these. */
enum { TGC_DEVICE_CPU = 0, TGC_DEVICE_GPU = 1 };

/* At most this many kinds (the placer keeps a node's kinds in 8 bits). */
#define TGC_MAX_BACKENDS 8

/* The most devices one kind lists. */
#define TGC_MAX_DEVICES_LISTED 32

struct tgc_device;
struct tgc_kernel_def;

typedef struct tgc_backend {
    const char *name;   /* what the backend is: "cpu", "opencl" */
    /* Device names: the prefix and an index ("gpu" names gpu0, gpu1; the
     * prefix alone is device 0). Lower-case letters, at most 8, unique. */
    const char *prefix;
    /* The placer's default: a node that may run on several listed kinds
     * goes to the highest priority's first listed device. */
    int priority;
    /* Buffers are host memory: cpu kernels and the host read and write
     * them in place (tgc_buffer_host_ptr), and tensors between two such
     * devices need no copy. Strings, sequences and optionals live only on
     * such devices. */
    bool host_memory;
    /* The host's own processor: integer shape arithmetic, graph inputs read
     * only as shape arguments and a kind's host-side kernels run on its
     * devices (exactly one backend, the cpu, says so). */
    bool host;
    size_t alignment; /* bytes every buffer's address is a multiple of (the static plan's offsets too) */
    /* Its kernels take their workspaces (im2col, a library's temporary
     * buffers) from the device's allocator, so its figures (peak bytes in
     * use) count them; else from host memory, outside them. */
    bool workspaces_in_allocator;
    /* Threads of a device's pool when the session's options do not say; >= 1. */
    int (*default_threads)(void);
    /* Writes up to `max` devices of this kind, with their memory figures,
     * into out[] (name as --devices spells it); returns how many there
     * are on this machine (0: none; never negative). */
    int (*list)(tgc_device_info *out, int max);
    /* (A kind lists at most TGC_MAX_DEVICES_LISTED.) */
    /* Opens device `index` of this kind into *out (refs 1, released with
     * tgc_device_release). TGC_ERR_INVALID when there is no such device
     * (a message in diags naming the devices there are), TGC_ERR_NOMEM,
     * TGC_ERR_RUNTIME (the driver failed, in diags). */
    tgc_status (*open)(int index, tgc_diags *diags, struct tgc_device **out);
    /* The kernels: {.op = NULL}-terminated arrays, the list NULL-terminated.
     * Where two kernels of one op both take a dtype, the earlier wins. */
    const struct tgc_kernel_def *const *families;
    /* What a kernel cannot do that its op and dtypes do not say
     * (attributes, other inputs' dtypes): false when `k` cannot run node
     * n. NULL: every kernel runs every node of its op and dtypes. */
    bool (*supports)(const struct tgc_kernel_def *k, const tgc_node *n);
} tgc_backend;

/* The number of kinds (built in and registered). Thread safe. */
int tgc_backend_count(void);

/* The backend of `kind`, or NULL when no kind has that number. */
const tgc_backend *tgc_backend_get(tgc_device_kind kind);

/* The kind of the host's processor (the cpu): always 0. */
static inline tgc_device_kind tgc_backend_host_kind(void) { return TGC_DEVICE_CPU; }

/* Opens device `index` of the host kind (tgc_backend.open of the cpu's
 * table; refs 1, released with tgc_device_release): scratch memory of
 * the process's own (constant folding, MPI's landing buffers, the
 * stand-ins of other processes' devices). NULL when out of memory. */
struct tgc_device *tgc_backend_open_host(int index);

/* True when `kind`'s buffers are host memory (tgc_backend.host_memory);
 * false for a kind that does not exist. */
bool tgc_kind_host_memory(tgc_device_kind kind);

/* True when `kind` is the host's processor (tgc_backend.host). */
bool tgc_kind_is_host(tgc_device_kind kind);

/* The kind whose prefix is s[0..len) exactly, or -1. */
tgc_device_kind tgc_backend_by_prefix(const char *s, size_t len);

/* Adds backend `b` (static storage: it must outlive the process) to the
 * list and returns its kind in *kind; registering the same table again
 * gives its kind again. The kernel index takes its kernels on first use.
 * TGC_ERR_INVALID when the list is full, a field is missing (name, prefix,
 * list, open, default_threads, families) or the prefix is not 1-8
 * lower-case letters or is another backend's. Thread safe; kinds are
 * never removed. For kinds that live outside the library (tests). */
tgc_status tgc_backend_register(const tgc_backend *b, tgc_device_kind *kind);

/* The threads of the pool of device `name` (canonical: "cpu0") of `kind`
 * from `spec` ("cpu0=2,gpu0=1", tgc_session_options.threads; "cpu" is
 * cpu0; NULL or a spec that does not name it: the backend's default). A
 * malformed entry or a count outside 1..256 sets *st to TGC_ERR_INVALID
 * ("bad-threads" in diags when not NULL) and gives the default. */
int tgc_threads_option(const char *name, tgc_device_kind kind, const char *spec, tgc_diags *diags, tgc_status *st);

/* ---- Device names ---------------------------------------------------------- */

/* A device a list names: kind, index and the process (task) it belongs to
 * ("gpu1" is {gpu's kind, 1, 0}; "/task:2/cpu0" is {cpu, 0, 2}: MPI rank
 * 2's cpu0, docs/distributed.md). Task 0 is the process that reads the
 * feeds; a name without a task is task 0's. */
typedef struct tgc_device_id {
    tgc_device_kind kind;
    int index;
    int task;
} tgc_device_id;

/* Parses s[0..len): [/task:T/]PREFIX[N] with PREFIX a backend's, N and T
 * without leading zeros (N at most 99999, T at most 99999). The prefix
 * alone is index 0; *partial (when not NULL) says the index was left out
 * (a partial spec: any device of the kind). False for anything else. */
bool tgc_device_id_parse(const char *s, size_t len, tgc_device_id *out, bool *partial);

/* Writes "cpu0", "gpu1", "/task:1/cpu0" (the task only when not 0). */
const char *tgc_device_id_name(tgc_device_id d, char *buf, size_t size);

/* True when `spec` is a device spec a graph may hold (tgc_device_id_parse
 * over the whole string, at most 31 characters). */
bool tgc_device_spec_valid(const char *spec);

/* "cpu, cpuN, gpu, gpuN": the forms of device names, for messages. */
const char *tgc_device_name_forms(char *buf, size_t size);

/* The canonical name of s[0..len) in buf ("cpu" -> "cpu0", "/task:0/gpu"
 * -> "gpu0"); a string that is not a device name is copied as it is
 * (truncated to size). Returns buf. */
const char *tgc_device_name_canonical(const char *s, size_t len, char *buf, size_t size);

/* The device list a run takes when it names none: the host's cpu ("cpu"). */
const char *tgc_default_device_list(void);

#endif
