/* heapscope.h - control of the tracer from inside a program that links libheapscope.so */
#ifndef HEAPSCOPE_HEAPSCOPE_H
#define HEAPSCOPE_HEAPSCOPE_H

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Linking libheapscope.so (or preloading it) interposes the malloc family.
 * Tracing starts by itself when HEAPSCOPE_OUTPUT is set; otherwise the
 * library stays inert until hs_start().
 */

/* Starts tracing if HEAPSCOPE_OUTPUT asks for it; returns 1 if tracing, 0 if not. */
int hs_trace_if_requested(void);

/*
 * Starts tracing into path (%p expands to the pid, %e to the executable's
 * name; a relative path is taken from the working directory of this call).
 * Returns 0, or -1 if the file cannot be created. A no-op returning 0
 * when already tracing.
 */
int hs_start(const char *path);

/* Flushes and closes the trace; the program keeps running untraced. Returns 0, or -1 if not tracing. */
int hs_stop(void);

/* Records a labelled point in time (at most 256 bytes of label) for the timeline. Returns 0, or -1 if not tracing. */
int hs_marker(const char *label);

#ifdef __cplusplus
}
#endif

#endif
