#!/bin/sh
# Rewrites docs/sources.md's "Where each key is cited" table from the tracked files (the
# table the test sources_cited_table_is_current checks). Run after citing a key somewhere new.
set -eu
cd "$(dirname "$0")/.."
TRNSIM_WRITE_SOURCES_TABLE=1 cargo test -q -p trnsim-tests --test integration \
    sources_cited_table_is_current::the_where_each_key_is_cited_table_lists_exactly_the_files_that_cite_it
git diff --stat -- docs/sources.md
