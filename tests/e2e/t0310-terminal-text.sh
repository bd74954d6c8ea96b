#!/usr/bin/env bash
# Text a video controls never drives the terminal: a title holding escape sequences
# (retitle the window, clear the screen), BEL, C1 controls, a bidirectional override,
# tabs, newlines and backslashes is printed by ls as one escaped row, by show and
# search with the controls replaced, by export on a terminal the same; error lines
# quoting such text stay one line.
. "$(dirname "$0")/lib.sh"

vt init
# ESC ] 0 ; PWNED BEL (window title), ESC [ 2 J (clear screen), a tab, a newline,
# a backslash, C1 CSI (U+009B) and a right-to-left override (U+202E)
title=$'Evil\e]0;PWNED\a\e[2J\tcol\nrow\\end\xc2\x9b31m\xe2\x80\xaeevil'
gen_clip "$T/evil.mp4" 2 'Screen Text'
ffmpeg -v error -y -i "$T/evil.mp4" -c copy -metadata "title=$title" "$T/titled.mp4"
id=$(vt add "$T/titled.mp4")
vt export "$id" > "$T/doc.json"
[[ $(json "$T/doc.json" "d['title']") == "$title" ]] || fail "the title is not stored as it is"

# no byte of a control sequence: ESC, BEL, C1 (UTF-8 c2 80..9f), U+202E
controls() { LC_ALL=C grep -c $'[\x01-\x08\x0b-\x1f\x7f]\|\xc2[\x80-\x9f]\|\xe2\x80\xae' "$1" || true; }

# ls: one row of five tab-separated fields; tab, newline, backslash escaped
vt ls > "$T/ls"
[[ $(wc -l < "$T/ls") == 1 ]] || fail "ls: the title broke the row: $(cat -A "$T/ls")"
[[ $(awk -F'\t' '{ print NF }' "$T/ls") == 5 ]] || fail "ls: not 5 fields: $(cat -A "$T/ls")"
[[ $(controls "$T/ls") == 0 ]] || fail "ls: control characters: $(cat -A "$T/ls")"
[[ $(cut -f 2 "$T/ls") == 'Evil ]0;PWNED  [2J\tcol\nrow\\end 31m evil' ]] ||
  fail "ls: title field: $(cut -f 2 "$T/ls" | cat -A)"
[[ $(cut -f 1,3- "$T/ls") == "$id"$'\t0:02\tready\tok' ]] || fail "ls: other fields: $(cat -A "$T/ls")"
"$VIDTHEQUE" help ls | grep -q 'written \\\\, \\t, \\n or \\r' || fail "help ls does not say how fields are escaped"

# show: the title on its first line, controls replaced
vt show "$id" > "$T/show"
[[ $(controls "$T/show") == 0 ]] || fail "show: control characters: $(grep -n $'\e' "$T/show" | cat -A)"
[[ $(head -n 1 "$T/show") == 'Evil ]0;PWNED  [2J col row\end 31m evil' ]] ||
  fail "show: first line: $(head -n 1 "$T/show" | cat -A)"

# search: the hit's title line
vt search 'screen' > "$T/search"
grep -q "^$id " "$T/search" || fail "search found nothing: $(cat "$T/search")"
[[ $(controls "$T/search") == 0 ]] || fail "search: control characters: $(cat -A "$T/search")"
[[ $(wc -l < "$T/search") == 2 ]] || fail "search: the title broke the hit: $(cat -A "$T/search")"

# export: data for tools as it is through a pipe (JSON escapes it anyway) ...
grep -q '\\u001[bB\]]0;PWNED' "$T/doc.json" || fail "export: the title is not escaped JSON"
# ... and made safe when a person reads it on a terminal (script(1) gives it a pty)
if command -v script > /dev/null; then
  # C1 U+009B comes through JSON as is: only a terminal reader gets it replaced
  script -qec "'$VIDTHEQUE' -q -L '$LIB' export $id" /dev/null > "$T/tty.json" < /dev/null
  grep -q PWNED "$T/tty.json" || fail "export on a terminal printed nothing: $(head -c 300 "$T/tty.json")"
  tr -d '\r' < "$T/tty.json" > "$T/tty2.json"
  [[ $(controls "$T/tty2.json") == 0 ]] || fail "export on a terminal: control characters"
  [[ $(controls "$T/doc.json") != 0 ]] || fail "export through a pipe changed the document"
  script -qec "'$VIDTHEQUE' -q -L '$LIB' search --json screen" /dev/null > "$T/tty.hits" < /dev/null
  grep -q PWNED "$T/tty.hits" || fail "search --json on a terminal: $(head -c 300 "$T/tty.hits")"
  tr -d '\r' < "$T/tty.hits" > "$T/tty2.hits"
  [[ $(controls "$T/tty2.hits") == 0 ]] || fail "search --json on a terminal: control characters"
  vt search --json screen > "$T/hits.json"
  [[ $(json "$T/hits.json" "d['hits'][0]['title']") == "$title" ]] || fail "search --json changed the title"
else
  note "no script(1): export on a terminal not checked"
fi

# error lines quoting what came from outside: one line, no control characters
expect_exit 1 "$VIDTHEQUE" -L "$LIB" show $'bad\e]0;X\a\nid'
one_line_err
[[ $(controls "$T/err") == 0 ]] || fail "error line: $(cat -A "$T/err")"
expect_exit 1 "$VIDTHEQUE" -L "$LIB" add "$T/"$'no\e[2Jsuch\nfile.mp4'
one_line_err
[[ $(controls "$T/err") == 0 ]] || fail "error line: $(cat -A "$T/err")"
expect_exit 1 "$VIDTHEQUE" -L "$T/"$'nolib\e[31m\n' ls
one_line_err
[[ $(controls "$T/err") == 0 ]] || fail "error line: $(cat -A "$T/err")"
expect_exit 2 "$VIDTHEQUE" $'\e[2Jcmd'
[[ $(controls "$T/err") == 0 ]] || fail "error line: $(cat -A "$T/err")"
# the "already in the library" line names the file given
cp "$T/titled.mp4" "$T/"$'copy\e]0;X\a.mp4'
"$VIDTHEQUE" -L "$LIB" add "$T/"$'copy\e]0;X\a.mp4' > "$T/out" 2> "$T/err" || fail "add of a copy failed"
grep -q 'is already in the library' "$T/err" || fail "no 'already' line: $(cat -A "$T/err")"
[[ $(controls "$T/err") == 0 ]] || fail "'already' line: $(cat -A "$T/err")"
echo "all good"
