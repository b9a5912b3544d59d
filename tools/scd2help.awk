# scd2help.awk: the help text of `pure-link help [TOPIC]` from the manual's scdoc source
# (man/pure-link.1.scd), as a C header of one string per topic: help_overview for the
# region after "; help", help_TOPIC for "; help TOPIC", each up to "; help end".  Lines
# outside a region are the manual's alone.  What scdoc would render is written as text:
#   # TITLE, ## TITLE     the title at the left margin (a blank line after it is dropped)
#   text                  indented 4 spaces; each leading tab 4 more
#   ```...```             literal lines, indented 4 spaces, as they are but for \\\\, one
#                         backslash there as in scdoc
#   *bold*, _underline_   the words without their marks (\* and \_ are the characters)
# Underscores inside a word are characters, as scdoc reads them.

function isalnum(c) { return c ~ /[A-Za-z0-9]/ }

# The text of a line without scdoc's marks, by scdoc's rules for * and _.
function plain(s,    out, i, c, last, next_c, under) {
    out = ""; last = ""; under = 0
    for (i = 1; i <= length(s); i++) {
        c = substr(s, i, 1)
        next_c = substr(s, i + 1, 1)
        if (c == "\\" && (next_c == "*" || next_c == "_" || next_c == "\\")) { out = out next_c; last = next_c; i++; continue }
        if (c == "*") { last = c; continue }
        if (c == "_" && (!isalnum(last) || (under && !isalnum(next_c)))) { under = !under; last = c; continue }
        out = out c; last = c
    }
    return out
}

# Character by character: awks differ in what a backslash in gsub's replacement means.
function cquote(s,    out, i, c) {
    out = ""
    for (i = 1; i <= length(s); i++) {
        c = substr(s, i, 1)
        out = out ((c == "\\" || c == "\"") ? "\\" c : c)
    }
    return out
}

function unescape_backslashes(s,    out, i, c) {
    out = ""
    for (i = 1; i <= length(s); i++) {
        c = substr(s, i, 1)
        if (c == "\\" && substr(s, i + 1, 1) == "\\") i++
        out = out c
    }
    return out
}

function emit(line) { printf "    \"%s\\n\"\n", cquote(line) }

function close_region() {
    if (topic != "") print "    \"\";"
    topic = ""
}

BEGIN { topic = ""; literal = 0; after_title = 0
        print "/* Generated from man/pure-link.1.scd by tools/scd2help.awk: edit those, not this. */" }

/^; help( |$)/ {
    close_region()
    name = $3
    if (name == "end") next
    topic = name == "" ? "overview" : name
    printf "static const char help_%s[] =\n", topic
    literal = 0; after_title = 0
    next
}
topic == "" { next }
/^```/ { literal = !literal; after_title = 0; next }
literal { emit("    " unescape_backslashes($0)); next }
/^;/ { next }
/^##? / { sub(/^##? /, ""); emit(plain($0)); after_title = 1; next }
/^$/ { if (!after_title) emit(""); after_title = 0; next }
{
    after_title = 0
    indent = "    "
    line = $0
    while (substr(line, 1, 1) == "\t") { indent = indent "    "; line = substr(line, 2) }
    emit(indent plain(line))
}
END { close_region() }
