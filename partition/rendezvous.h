/* The rendezvous: where a _Send and a _Recv of one step meet by key
 * (TensorFlow's local rendezvous). Private to the library.
 *
 * One rendezvous serves all the executors of one run (one step); every key
 * is sent once and received once in it. `send` never waits for a receiver:
 * it leaves the value under its key. `recv_async` never waits for a sender:
 * it leaves a callback, called once the value is there, on the thread that
 * completes the match (the sender's when the receiver came first). The
 * value arrives where the receiver asked for it: the buffer itself when it
 * is already there (host to host shares the buffer: cpu0 and cpu1 are one
 * memory), otherwise a copy made through the devices' copy functions (host
 * <-> OpenCL, or device -> host -> device). A failing step calls `abort`:
 * every receiver waiting, and every later one, gets the error instead of a
 * value. Thread safe; callbacks run without the rendezvous' lock held, so
 * they may send and receive again.
 *
 * Keys. The partitioner names a pair "SRC_DEVICE;DST_DEVICE;TENSOR"
 * (partition/partition.c); at run time the executor puts the step id in
 * front, then the frame and iteration of each enclosing subgraph run:
 * "step17/cpu0;gpu0;conv1", "step17/loop@3/cpu0;gpu0;x" (TensorFlow's
 * step id and frame/iteration). A key therefore names its step wherever
 * it travels (a message between processes too), and steps running at once
 * on one session never meet each other's tensors even if they shared a
 * rendezvous. tgc_rendezvous_key_step reads the id back.
 *
 * Example usage:
 *     tgc_rendezvous *r;
 *     if (tgc_rendezvous_create(&r) != TGC_OK) ...
 *     tgc_rendezvous_recv_async(r, "step1/cpu0;gpu0;conv1", gpu, on_conv1, ctx);
 *     tgc_rendezvous_send(r, "step1/cpu0;gpu0;conv1", &value);   // on_conv1 runs now, with a gpu copy
 *     tgc_rendezvous_free(r);
 */
#ifndef TGC_PARTITION_RENDEZVOUS_H
#define TGC_PARTITION_RENDEZVOUS_H

#include "devices/kernel.h"

typedef struct tgc_rendezvous tgc_rendezvous;

/* Called once per accepted recv_async. On TGC_OK `received` points at the
 * value (valid during the call; copy the struct) whose buffer reference
 * the callback now owns and must release. On failure (an abort, or a copy
 * that failed: TGC_ERR_NOMEM, TGC_ERR_RUNTIME) `received` is NULL. */
typedef void (*tgc_recv_callback)(void *ctx, tgc_status status, tgc_value *received);

/* The prefix every key of step `step_id` starts with: "step17/" in buf
 * (at least TGC_RENDEZVOUS_STEP_PREFIX_MAX bytes). Returns buf. */
#define TGC_RENDEZVOUS_STEP_PREFIX_MAX 32
const char *tgc_rendezvous_step_prefix(int64_t step_id, char *buf, size_t size);

/* The step id a key starts with ("step17/..." -> 17) in *step_id: true,
 * or false when the key has no step prefix (then *step_id is -1). */
bool tgc_rendezvous_key_step(const char *key, int64_t *step_id);

/* A new, empty rendezvous in *out. TGC_OK or TGC_ERR_NOMEM. */
tgc_status tgc_rendezvous_create(tgc_rendezvous **out);

/* Leaves `v` under `key` (copied) for its receiver, taking a reference of
 * its own to v->buf (the caller keeps its own). Never waits; when the
 * receiver is already waiting, moves the value to it and runs its callback
 * on this thread before returning. Returns TGC_OK; TGC_ERR_INVALID when the
 * key was sent already in this step; the abort status after an abort (the
 * value is dropped); TGC_ERR_NOMEM. */
tgc_status tgc_rendezvous_send(tgc_rendezvous *r, const char *key, const tgc_value *v);

/* Asks for the value under `key`, to be delivered in `dst`'s memory (NULL:
 * host memory, for _HostRecv). When it is there already, or the rendezvous
 * has aborted, `done` runs on this thread before returning; otherwise it
 * runs when the value is sent (or the rendezvous aborts). Returns TGC_OK
 * when `done` has run or will run exactly once; TGC_ERR_INVALID when the
 * key already has a receiver in this step, or TGC_ERR_NOMEM: then `done`
 * never runs. */
tgc_status tgc_rendezvous_recv_async(tgc_rendezvous *r, const char *key, tgc_device *dst, tgc_recv_callback done,
                                     void *ctx);

/* Fails the step: every waiting receiver's callback runs (on this thread)
 * with `status` (not TGC_OK), and every later recv_async gets it at once;
 * values sent and not received are released now. The first abort wins;
 * later ones are ignored. `message` (may be NULL) is kept for
 * tgc_rendezvous_message. */
void tgc_rendezvous_abort(tgc_rendezvous *r, tgc_status status, const char *message);

/* TGC_OK, or the status the rendezvous was aborted with. */
tgc_status tgc_rendezvous_status(tgc_rendezvous *r);

/* The first abort's message ("" when none); valid until tgc_rendezvous_free.
 * Read it once tgc_rendezvous_status says the rendezvous has aborted. */
const char *tgc_rendezvous_message(tgc_rendezvous *r);

/* Values sent and not yet received, and receivers waiting (for tests and
 * for executors that check a step drained). */
void tgc_rendezvous_pending(tgc_rendezvous *r, int64_t *sent, int64_t *waiting);

/* Releases the rendezvous: values never received are released; a receiver
 * still waiting (a step abandoned without abort) gets TGC_ERR_RUNTIME
 * first. NULL is ignored. No other thread may use `r` any more. */
void tgc_rendezvous_free(tgc_rendezvous *r);

#endif
