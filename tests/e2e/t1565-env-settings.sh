#!/usr/bin/env bash
# Settings from the environment and the database password kept out of the shared config
# (issue 26): every config key is also VIDTHEQUE_<KEY> (capitals, '.' as '_'), which wins
# over the file; db.password_file (or VIDTHEQUE_DB_PASSWORD_FILE) names a file with the
# password, refused when others may read it, and no command prints the password.
. "$(dirname "$0")/lib.sh"

"$VIDTHEQUE" -q -L "$LIB" init || fail "init"
vt config set stt.hints false
[[ $(vt config get stt.hints) == false ]] || fail "config get"
[[ $(VIDTHEQUE_STT_HINTS=true vt config get stt.hints) == true ]] || fail "VIDTHEQUE_STT_HINTS does not win over the file"
[[ $(VIDTHEQUE_TEXT_EMBED_MODEL=/x vt config get text_embed.model) == /x ]] || fail "VIDTHEQUE_TEXT_EMBED_MODEL is not read"
# a stage's reader sees it too: the search by meaning names the model the environment gave
expect_exit 1 env VIDTHEQUE_TEXT_EMBED_BACKEND=model2vec VIDTHEQUE_TEXT_EMBED_MODEL="$T/no-such-model" \
  "$VIDTHEQUE" -q -L "$LIB" search --mode meaning rivers
grep -q "no-such-model" "$T/err" || fail "search by meaning did not read the environment's model: $(cat "$T/err")"
vt config list > "$T/list"
grep -q '^stt.hints = false$' "$T/list" || fail "config list shows the file: $(cat "$T/list")"

# the password file: refused when others may read it; never printed
printf 's3cr3t-pw\n' > "$T/pw"
chmod 644 "$T/pw"
export VIDTHEQUE_DB='postgresql://vt@127.0.0.1:1/vtdb?connect_timeout=2'
export VIDTHEQUE_DB_PASSWORD_FILE=$T/pw
expect_exit 1 "$VIDTHEQUE" -q -L "$LIB" ls
one_line_err
grep -q "db.password_file '$T/pw': readable by others" "$T/err" || fail "a readable password file was taken: $(cat "$T/err")"
chmod 600 "$T/pw"
expect_exit 1 "$VIDTHEQUE" -q -L "$LIB" ls
grep -q "s3cr3t" "$T/err" && fail "the password was printed: $(cat "$T/err")"
grep -q "password_file" "$T/err" && fail "a private password file was refused: $(cat "$T/err")"
unset VIDTHEQUE_DB_PASSWORD_FILE
# in the config: the path is there, the password is not
VIDTHEQUE_DB= vt config set db.password_file "$T/pw"
grep -q "s3cr3t" "$LIB/config" && fail "the password is in the config"
grep -q "^db.password_file = $T/pw$" "$LIB/config" || fail "db.password_file not kept: $(cat "$LIB/config")"
# a URL that holds a password, as a config get shows it: masked
VIDTHEQUE_DB= vt config unset db.password_file
unset VIDTHEQUE_DB
printf 'db = postgresql://vt:s3cr3t-pw@127.0.0.1:1/vtdb\n' >> "$LIB/config"
"$VIDTHEQUE" -q -L "$LIB" config get db > "$T/db" 2>&1 || true
"$VIDTHEQUE" -q -L "$LIB" config list >> "$T/db" 2>&1 || true
grep -q "s3cr3t" "$T/db" && fail "config printed the password: $(cat "$T/db")"
note "ok"
