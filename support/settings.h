/* Settings: the environment variables the library reads, read here and
 * nowhere else (tools/, tests/ and bench/ read their own). The rows, with
 * each variable's kind, default and meaning: support/settings.def; for
 * users, README.md's "Environment" table.
 *
 * A snapshot is a tgc_settings read from the environment at one moment and
 * never changed afterwards. tgc_session_create and tgc_eager_create take
 * one (tgc_settings_read) and keep it, so what a session does per step
 * (the test hooks, fusion when its plans are built) follows the
 * environment at its creation, whatever the environment does later, and no
 * step calls getenv. Device and kernel code, which has no session at hand,
 * reads the process's newest snapshot (tgc_settings_current): the one the
 * latest session or context took. Readers that must not see a value change
 * in a running process (TGC_DEBUG_ALLOC, TGC_CPU_ISA, TGC_FAIL_ALLOC) keep
 * the value they saw first.
 *
 * A program that changes a variable with setenv sees the change in the
 * sessions and contexts it makes afterwards; code that bypasses them (unit
 * tests calling a device directly) calls tgc_settings_read itself.
 *
 * Example usage:
 *     const tgc_settings *set = tgc_settings_read();   // as a session does
 *     if (!set->no_fusion) fold_activations(plan);
 *     if (tgc_settings_current()->jit) compile(group); // device code
 */
#ifndef TGC_SUPPORT_SETTINGS_H
#define TGC_SUPPORT_SETTINGS_H

#include <stdint.h>

/* A field per row of settings.def, with its kind's C type. */
#define TGC_SETTING_TYPE_SWITCH int
#define TGC_SETTING_TYPE_INT int64_t
#define TGC_SETTING_TYPE_TEXT const char *

typedef struct tgc_settings {
#define TGC_SETTING(NAME, field, KIND, DEFAULT, LO, HI) TGC_SETTING_TYPE_##KIND field;
#include "support/settings.def"
#undef TGC_SETTING
} tgc_settings;

/* Reads every variable of settings.def from the environment now and makes
 * the result the process's newest snapshot (what tgc_settings_current
 * returns from then on). Returns it: never NULL, owned by the module and
 * valid, unchanged, until the process exits (callers keep the pointer and
 * free nothing); its TEXT fields point into it. Reading an environment
 * equal to one read before returns that earlier snapshot, so the memory
 * kept grows only with the number of different environments seen. With
 * host memory short it cannot fail: it returns the newest snapshot there
 * is (before any, the defaults), so a change goes unseen. Thread safe;
 * never allocates through tgc_malloc (support/alloc.c reads its setting
 * from here). */
const tgc_settings *tgc_settings_read(void);

/* The process's newest snapshot: the latest tgc_settings_read's, made by
 * the first call when there is none yet. Never NULL; lives until the
 * process exits. Thread safe and cheap (one atomic load): callable per
 * kernel or per wait. */
const tgc_settings *tgc_settings_current(void);

#endif
