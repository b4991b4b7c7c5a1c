/* Arrays of string slots: the element representation of TGC_STRING.
 *
 * A string tensor's data is an array of `char *`, one slot per element in
 * C order. Each slot is NULL (the empty string) or a NUL-terminated UTF-8
 * string from tgc_malloc, owned by whatever owns the array (a device
 * buffer, devices/device.h; a graph constant, graph/graph.h). Slots are
 * never shared between two arrays: a copy copies every string.
 *
 * Example usage:
 *     char **s = tgc_calloc(n, sizeof *s);           // n empty strings
 *     if (tgc_string_slots_copy(s, src, n) != TGC_OK) ...  // deep copy
 *     tgc_string_slots_free(s, n);                   // the strings, not the array
 *     tgc_free(s);
 */
#ifndef TGC_SUPPORT_STRING_SLOTS_H
#define TGC_SUPPORT_STRING_SLOTS_H

#include "tgc.h"

#include <stddef.h>

/* Frees the strings of slots[0..n) and sets each slot to NULL; the array
 * itself stays the caller's. NULL slots (and slots == NULL) are fine. */
void tgc_string_slots_free(char **slots, size_t n);

/* Copies src[0..n) into dst[0..n): each non-empty string is duplicated
 * (tgc_malloc), a NULL or "" source gives a NULL slot. dst's old strings
 * are freed first. TGC_ERR_NOMEM when a copy fails: the slots copied so
 * far stay in dst (owned by it, freed by tgc_string_slots_free), the rest
 * are NULL. */
tgc_status tgc_string_slots_copy(char **dst, const char *const *src, size_t n);

/* Sets slot *dst to a copy of the first `len` bytes of `s` plus a NUL (NULL
 * when len is 0), freeing its old string. TGC_ERR_NOMEM leaves *dst NULL. */
tgc_status tgc_string_slot_set(char **dst, const char *s, size_t len);

/* The string a slot holds: "" for NULL. */
static inline const char *tgc_string_slot_get(const char *const *slots, size_t i) {
    return slots[i] != NULL ? slots[i] : "";
}

/* The bytes of the strings of slots[0..n) (each with its NUL), for memory
 * figures. */
size_t tgc_string_slots_bytes(const char *const *slots, size_t n);

#endif
