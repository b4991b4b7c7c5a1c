/* The run loop's limits (private). */
#ifndef TGC_EXECUTOR_RUN_H
#define TGC_EXECUTOR_RUN_H

#include "executor/session.h"

/* The most inputs or outputs one node may have at run time (Concat, Max...). */
#define TGC_RUN_MAX_IO 64

#endif
