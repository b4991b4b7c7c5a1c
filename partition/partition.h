/* The partitioner: a placed graph becomes one standalone subgraph per
 * device, and every edge that crosses devices becomes a _Send on the
 * producer's device and a _Recv on the consumer's, which meet in a
 * rendezvous (partition/rendezvous.h) under one key. Private to the library.
 *
 * The rules (TensorFlow's graph partitioner, made small):
 *   - a node goes to the partition of the device its placement gives it;
 *     graph inputs and initializers too;
 *   - a data edge A:k (device X) -> B (device Y != X) becomes
 *     _Send(A:k) on X and _Recv on Y feeding B, with attributes
 *     tensor_name ("A" or "A:k"), send_device, recv_device ("cpu0", "gpu0")
 *     and key "X;Y;tensor_name"; one pair per (tensor, destination device,
 *     host-or-device memory), however many consumers on Y read it;
 *   - except from a small constant (tgc_node_is_small_constant: a Clip's
 *     bounds, a Reshape's shape): Y gets a copy of it, same name, instead
 *     of a pair sending it every step (and Y's kernels see a constant,
 *     which fusing an activation into its producer needs);
 *   - a _Recv on a non-cpu device whose consumers read the tensor as a
 *     host-memory input (the kernel's host_inputs or metadata_inputs bit)
 *     receives into host memory (TensorFlow's _HostRecv): attribute
 *     host_memory 1, and ";host" appended to its key, so the two kinds of
 *     receive of one tensor never share a key; a _Send whose tensor is a
 *     host-memory output (host_outputs) has host_memory 1 likewise;
 *   - a control edge ^A (X) -> B (Y) becomes a pair carrying an empty tensor
 *     (bool, shape [0]): on X a Constant that runs after A (^A) feeds the
 *     _Send; on Y the _Recv feeds an Identity that is B's control input.
 *     Its tensor_name is "^A";
 *   - graph outputs are fetched from the partition that produces them.
 *
 * Added nodes are named after the tensor, TensorFlow style:
 * "A:1/_send_gpu0", "A:1/_recv_cpu0", "A:1/_hostrecv_cpu0",
 * "A/_ctrl_empty", "A/_send_ctrl_gpu0", "A/_recv_ctrl_cpu0", "A/_ctrl_cpu0"
 * (with "_2", "_3"... appended should such a name be taken).
 *
 * Example usage:
 *     tgc_partitioning parts;
 *     if (tgc_partition_build(g, &placement, devs, n_devs, diags, &parts) == TGC_OK) {
 *         for (int i = 0; i < parts.n_parts; i++)
 *             run parts.parts[i].graph on devs[parts.parts[i].device] ...
 *         tgc_partitioning_release(&parts);
 *     }
 */
#ifndef TGC_PARTITION_PARTITION_H
#define TGC_PARTITION_PARTITION_H

#include "graph/graph.h"
#include "placer/placer.h"

/* One device's subgraph. */
typedef struct tgc_partition {
    int device;          /* index into the device list given to tgc_partition_build */
    char device_name[32]; /* "cpu0", "gpu0", "/task:1/cpu0" */
    /* A standalone graph: its own names, symbols (the original's, same
     * indices), constant data and tensor infos (values too); every op node's
     * `device` is device_name; topo is set (node ids are already in a
     * topological order); `outputs` are the graph outputs produced here.
     * Owned by the partitioning. */
    tgc_graph *graph;
    /* graph->n_nodes entries: the original node id of each node, or -1 for
     * the nodes the partitioner added (_Send, _Recv, and a control pair's
     * Constant and Identity). A small constant's copies have its id too;
     * part_of and local_id point at the one placed. */
    int32_t *origin;
} tgc_partition;

/* One _Send/_Recv pair. */
typedef struct tgc_partition_pair {
    char *key;         /* "cpu0;gpu0;conv1", "cpu0;gpu0;flat_shape;host", "cpu0;gpu0;^a"; owned */
    char *tensor_name; /* "conv1", "split:1", "^a" (control); owned */
    tgc_ref tensor;    /* the original producer (node id) and port; port -1 for a control pair */
    int send_part;     /* partition index and node id of the _Send */
    int32_t send_node;
    int recv_part;     /* partition index and node id of the _Recv */
    int32_t recv_node;
    /* What consumers on the receiving side read: the _Recv itself, or a
     * control pair's Identity. */
    int32_t recv_feed;
    bool control;
    bool send_host_memory; /* the sent tensor is a host-memory output */
    bool recv_host_memory; /* received into host memory (_HostRecv) */
    tgc_dtype dtype;       /* what crosses: bool for a control pair */
    tgc_shape shape;       /* [0] for a control pair; dims may be symbols */
    int64_t bytes;         /* per step, each symbol counted as 1 */
} tgc_partition_pair;

/* Where a graph output is fetched. */
typedef struct tgc_partition_fetch {
    int part;     /* partition index */
    int32_t node; /* node id in that partition */
    int32_t port;
} tgc_partition_fetch;

typedef struct tgc_partitioning {
    tgc_partition *parts; /* one per device that has nodes, in device-list order */
    int n_parts;
    tgc_partition_pair *pairs; /* in the order the partitioner made them */
    int32_t n_pairs;
    tgc_partition_fetch *outputs; /* graph output i -> where it is fetched */
    int n_outputs;
    /* Original node id -> the partition it went to, and its id there
     * (graph inputs: feed input id through these). */
    int32_t *part_of;
    int32_t *local_id;
    int32_t n_source_nodes;
    const tgc_placer_device *devices; /* borrowed: the list given to build */
    int n_devices;
} tgc_partitioning;

/* Splits `g` (validated and inferred: g->topo and every tensor info set) by
 * `p` (p->device[id] indexes devices[0..n_devices)) into *out, which the
 * caller releases with tgc_partitioning_release; `devices` is borrowed and
 * must outlive *out. Kernels are looked up (tgc_kernel_for_node) only to decide
 * host-memory ends; a node without a kernel is partitioned all the same.
 * Returns TGC_OK, TGC_ERR_INVALID (a device index out of range, a placement
 * of another graph; message in diags) or TGC_ERR_NOMEM; on failure *out is
 * zeroed. Time and memory linear in nodes plus edges. */
tgc_status tgc_partition_build(const tgc_graph *g, const tgc_placement *p, const tgc_placer_device *devices,
                               int n_devices, tgc_diags *diags, tgc_partitioning *out);

/* Releases the partition graphs, pairs and tables; leaves *p zeroed. */
void tgc_partitioning_release(tgc_partitioning *p);

/* Checks a partitioning against the graph it came from, reading only the
 * partition graphs (their nodes, edges and _Send/_Recv attributes), plus
 * the fetch table:
 *   - every _Recv has exactly one _Send with the same key and every _Send
 *     one _Recv; the two agree on tensor_name and devices, and each sits
 *     on the device its attributes name;
 *   - each partition is acyclic;
 *   - the union of the partitions, with every pair contracted (and a
 *     control pair's Constant and Identity with it), is `g`: the same nodes
 *     (by name, each in exactly one partition; a small constant's copies
 *     aside), the same data edges (input by input, port by port) and the
 *     same control edges;
 *   - every graph output is fetched from its producer.
 * Returns TGC_OK, or TGC_ERR_INVALID with one message per problem in diags
 * (rule "bad-partition"), or TGC_ERR_NOMEM. */
tgc_status tgc_partition_validate(const tgc_graph *g, const tgc_partitioning *p, tgc_diags *diags);

/* Crossing traffic from one device to another. */
typedef struct tgc_partition_traffic {
    int send_part, recv_part;
    int32_t pairs;
    int64_t bytes; /* per step; each symbolic dim counted as 1 */
} tgc_partition_traffic;

/* Fills out[0..max) with the traffic per (sending, receiving) partition
 * that has pairs, in partition order; returns how many there are. */
int tgc_partition_traffic_list(const tgc_partitioning *p, tgc_partition_traffic *out, int max);

/* Writes the one-line summary, e.g.
 * "2 partitions (cpu0: 9 nodes, gpu0: 21 nodes), 2 pairs: gpu0->cpu0 1 pair 32 bytes,
 *  cpu0->gpu0 1 pair 16 bytes per step (symbolic dims counted as 1)". */
void tgc_partition_summary(const tgc_partitioning *p, FILE *out);

/* Dumps (partition/dump_partitions.c). Each returns TGC_OK, or TGC_ERR_IO
 * with a message in diags. */

/* Partition `i` as a tgc/1 YAML document (tgc_graph_dump_yaml's rules;
 * dest_dir as there). */
tgc_status tgc_partition_dump_yaml(const tgc_partitioning *p, int i, FILE *out, const char *dest_dir,
                                   tgc_diags *diags);

/* All partitions and the pairs as one JSON document. */
tgc_status tgc_partition_dump_json(const tgc_partitioning *p, FILE *out, tgc_diags *diags);

/* Graphviz: one cluster per device, a dashed edge per _Send -> _Recv pair. */
tgc_status tgc_partition_dump_dot(const tgc_partitioning *p, FILE *out, tgc_diags *diags);

#endif
