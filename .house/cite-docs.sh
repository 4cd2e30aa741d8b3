#!/usr/bin/env bash
# Points the code's citations of design notes outside the repository at docs/ (idempotent).
cd "$(dirname "$0")/.."
files=$(grep -rl "PROTOCOL\.md\|PRODUCT\.md\|contracts\.md" src test scripts bench docs README.md esbuild.mjs 2>/dev/null | grep -v "docs/protocol.md\|docs/architecture.md")
[ -z "$files" ] && exit 0
sed -i -E \
  -e 's#PRODUCT\.md safety rules#docs/protocol.md section 10#g' \
  -e 's#\(contracts\.md\)#(docs/protocol.md section 1)#g' \
  -e 's#([^/a-z])PROTOCOL\.md#\1docs/protocol.md#g' \
  -e 's#^PROTOCOL\.md#docs/protocol.md#g' \
  $files
grep -rn "PROTOCOL\.md\|PRODUCT\.md\|contracts\.md" src test scripts bench docs README.md esbuild.mjs | grep -v "docs/protocol.md:\|docs/architecture.md:"
