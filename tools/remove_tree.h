/* Removing a scratch directory tree: the `tgc` command line's in-memory
 * ONNX import and tgc-conformance both work in a mkdtemp directory. */
#ifndef TGC_TOOLS_REMOVE_TREE_H
#define TGC_TOOLS_REMOVE_TREE_H

/* Removes `dir` and everything below it, depth first, without following
 * links; entries that cannot be removed are left (best effort). */
void tgc_tool_remove_tree(const char *dir);

#endif
