/* Scopes of tensor handles, the part the handles themselves call (the
 * public half is tgc_scope_begin / tgc_scope_end / tgc_keep /
 * tgc_scope_move_out in tgc.h). Private to executor/. */
#ifndef TGC_EXECUTOR_SCOPE_H
#define TGC_EXECUTOR_SCOPE_H

#include "executor/session.h"

/* Links the new handle `t` (not yet seen by any other thread) into the
 * calling thread's innermost open scope; does nothing when none is open.
 * Never fails: the list is intrusive. */
void tgc_scope_adopt(tgc_tensor *t);

/* Unlinks `t` from the scope that holds it, whichever thread opened it;
 * does nothing when none does. Called by tgc_tensor_release before it
 * drops the reference, so the scope's end does not drop it again. */
void tgc_scope_forget(tgc_tensor *t);

/* The calling thread's open scopes, and the handles they hold. */
void tgc_scope_figures(int *open_scopes, int64_t *held);

#endif
