#!/bin/sh
# tools/layers.py, the check that objects call only downward and never in a loop (LAYERS).
# First on synthetic objects, so the check is shown able to fail: a clean order passes; a
# two-file loop, a three-file loop across layers, an upward call, an object placed in no
# layer and a layer naming a file that is gone each fail with their own line.  Then on the
# tree's own objects under ${B:-build}, against LAYERS.
set -eu
top=$(pwd)
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/src/lib" "$t/obj/lib"
unit() {   # unit NAME CALLEE...: NAME.c defines NAME(), which calls each CALLEE()
    name=$1; shift
    { for c in "$@"; do echo "int $c(void);"; done
      echo "int $name(void);"
      printf 'int %s(void) { return 1' "$name"; for c in "$@"; do printf ' + %s()' "$c"; done; echo '; }'
    } > "$t/src/lib/$name.c"
    ${CC:-cc} -c "$t/src/lib/$name.c" -o "$t/obj/lib/$name.o"
}
check() {  # check WANT(pass|fail) PATTERN LAYERS-TEXT
    want=$1 pattern=$2
    printf '%s\n' "$3" > "$t/LAYERS"
    if python3 "$top/tools/layers.py" --root "$t/src" --build "$t/obj" "$t/LAYERS" > "$t/out" 2>&1; then got=pass; else got=fail; fi
    if [ "$got" != "$want" ] || ! grep -q -- "$pattern" "$t/out"; then
        echo "expected $want with '$pattern' for:"; cat "$t/LAYERS"; echo "got $got:"; cat "$t/out"; exit 1
    fi
}
layers='# a comment
[lib]
top: a      # entry
middle: b c
bottom: d'
unit a b c; unit b d; unit c d; unit d
check pass 'lib: 4 objects in 3 layers, 4 calls between objects, all downward, no loop' "$layers"
unit d a                                   # bottom calls top: upward, and a loop a-b-d
check fail 'upward call d (bottom) -> a (top) through a' "$layers"
check fail 'loop among a b c d' "$layers"
unit d; unit b c; unit c b                 # two files of one layer call each other
check fail 'loop among b c: b->c (c), c->b (b)' "$layers"
if grep -q upward "$t/out"; then echo "a loop inside one layer is not an upward call:"; cat "$t/out"; exit 1; fi
unit b d; unit c d; unit e d               # e.o is in no layer
check fail 'e.o is in no layer' "$layers"
rm "$t/src/lib/e.c" "$t/obj/lib/e.o"
check fail 'layer middle names x, which has no lib/x.c' "$(printf '[lib]\ntop: a\nmiddle: b c x\nbottom: d')"
check pass 'no loop' "$layers"

# The tree itself.
if grep -q '^\[' LAYERS; then
    python3 tools/layers.py --build "${B:-build}" LAYERS
else
    echo "LAYERS has no section yet"
fi
