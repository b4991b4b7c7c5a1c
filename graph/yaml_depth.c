/* How deep a YAML text's collections nest, found before the document is
 * loaded. libyaml's scanner checks every open flow collection's possible
 * simple key at each token, so text nesting n flow mappings (`{x: {x:
 * ...}}`) took time quadratic in n: 20,000 levels 2.3 s, 300,000 several
 * minutes. Parsing event by event and stopping at the first collection
 * past the limit bounds that work by the limit; a tgc/1 file needs about
 * 4 levels per subgraph (node list, node, attrs, subgraph). */
#include "graph/loader.h"

#include "support/diag.h"

tgc_status tgc_yaml_check_depth(const char *text, size_t size, int limit, const char *path, tgc_diags *diags) {
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) return TGC_ERR_NOMEM;
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, size);
    tgc_status s = TGC_OK;
    int depth = 0;
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev)) {
            if (parser.error == YAML_MEMORY_ERROR) s = TGC_ERR_NOMEM;
            break; /* a syntax error: the load that follows reports it */
        }
        yaml_event_type_t type = ev.type;
        tgc_srcpos pos = {(int)ev.start_mark.line + 1, (int)ev.start_mark.column + 1};
        yaml_event_delete(&ev);
        if (type == YAML_SEQUENCE_START_EVENT || type == YAML_MAPPING_START_EVENT) {
            if (++depth > limit) {
                s = tgc_diag_error(diags, path, pos, "over-limit",
                                   "mappings and lists nest deeper than %d levels here (a subgraph takes about 4)",
                                   limit);
                break;
            }
        } else if (type == YAML_SEQUENCE_END_EVENT || type == YAML_MAPPING_END_EVENT) {
            depth--;
        } else if (type == YAML_STREAM_END_EVENT) {
            break;
        }
    }
    yaml_parser_delete(&parser);
    return s;
}
