/*
 * The schema's migrations from version 9 on: one entry per version, both dialects side
 * by side, X(version, "SQLite SQL", "PostgreSQL SQL"), each taking the schema from
 * version - 1 to version. Both backends apply them after their own lists (versions 1-8:
 * store_sqlite.c's migrations[], store_pg.c's pg_migrations[]), in the same transaction;
 * VT_STORE_SCHEMA_VERSION counts them. Add an entry at the end, number it next; never
 * edit a shipped one.
 *
 * A stage's own table is keyed by video and goes with it:
 *     X(9, "CREATE TABLE mystage_rows ("
 *          " video_id TEXT NOT NULL REFERENCES videos(id) ON DELETE CASCADE, ...);",
 *          "CREATE TABLE mystage_rows ("
 *          " video_id text COLLATE \"C\" NOT NULL REFERENCES videos(id) ON DELETE CASCADE, ...);")
 * and its rows are written with vt_store_stage_rows_put / _clear (store.h).
 */
#ifndef VT_STORE_MIGRATIONS_H
#define VT_STORE_MIGRATIONS_H

/* The last version of the backends' own lists. */
#define VT_STORE_BASE_VERSION 8

/* 1 when every stage that row T of stages reads (stage_deps) has settled, else 0: the
 * pick's INPUTS_SETTLED (store_queue.c) as a value, for migration 12's column. */
#define STORE_READY_SQL(t)                                                                         \
    "CASE WHEN EXISTS (SELECT 1 FROM stage_deps d JOIN stages o ON o.video_id = " t ".video_id"    \
    " AND o.name = d.dep WHERE d.name = " t ".name AND o.state NOT IN (" VT_SQL_STATES_SETTLED     \
    ")) THEN 0 ELSE 1 END"

/* clang-format off */
#define VT_STORE_MIGRATIONS(X) \
    /* 9: each cue with the next one of its video ("pairs", speech only), so words said on \
     * either side of a cue boundary are found together (search.c's pair tier); kept by \
     * triggers on docs, so every writer of cues keeps them without knowing of them */ \
    X(9, "CREATE INDEX docs_by_ref ON docs (video_id, source, ref);" \
         "CREATE TABLE pairs (id INTEGER PRIMARY KEY, doc_id INTEGER NOT NULL," \
         " next_id INTEGER NOT NULL, video_id TEXT NOT NULL, start_s REAL NOT NULL," \
         " split INTEGER NOT NULL, text TEXT NOT NULL, meta TEXT NOT NULL);" \
         "CREATE INDEX pairs_by_doc ON pairs (doc_id);" \
         "CREATE INDEX pairs_by_next ON pairs (next_id);" \
         "CREATE VIRTUAL TABLE pairs_fts USING fts5 (text, meta, content='pairs'," \
         " content_rowid='id', tokenize='unicode61 remove_diacritics 2');" \
         "CREATE TRIGGER pairs_ai AFTER INSERT ON pairs BEGIN" \
         " INSERT INTO pairs_fts (rowid, text, meta) VALUES (new.id, new.text, new.meta); END;" \
         "CREATE TRIGGER pairs_ad AFTER DELETE ON pairs BEGIN" \
         " INSERT INTO pairs_fts (pairs_fts, rowid, text, meta)" \
         " VALUES ('delete', old.id, old.text, old.meta); END;" \
         "CREATE TRIGGER docs_pair_ai AFTER INSERT ON docs" \
         " WHEN new.source = 'speech' AND new.ref >= 0 BEGIN" \
         " INSERT INTO pairs (doc_id, next_id, video_id, start_s, split, text, meta)" \
         "  SELECT a.id, new.id, a.video_id, a.start_s, length(CAST(a.text AS BLOB)) + 1," \
         "  a.text || char(10) || new.text, a.meta FROM docs a WHERE a.video_id = new.video_id" \
         "  AND a.source = 'speech' AND a.ref = new.ref - 1 AND NOT EXISTS (SELECT 1 FROM pairs" \
         "  WHERE doc_id = a.id AND next_id = new.id) ORDER BY a.id;" \
         " INSERT INTO pairs (doc_id, next_id, video_id, start_s, split, text, meta)" \
         "  SELECT new.id, b.id, new.video_id, new.start_s, length(CAST(new.text AS BLOB)) + 1," \
         "  new.text || char(10) || b.text, new.meta FROM docs b WHERE b.video_id = new.video_id" \
         "  AND b.source = 'speech' AND b.ref = new.ref + 1 AND NOT EXISTS (SELECT 1 FROM pairs" \
         "  WHERE doc_id = new.id AND next_id = b.id) ORDER BY b.id; END;" \
         "CREATE TRIGGER docs_pair_ad AFTER DELETE ON docs WHEN old.source = 'speech' BEGIN" \
         " DELETE FROM pairs WHERE doc_id = old.id OR next_id = old.id; END;" \
         "INSERT INTO pairs (doc_id, next_id, video_id, start_s, split, text, meta)" \
         " SELECT a.id, b.id, a.video_id, a.start_s, length(CAST(a.text AS BLOB)) + 1," \
         " a.text || char(10) || b.text, a.meta FROM docs a JOIN docs b" \
         " ON b.video_id = a.video_id AND b.source = 'speech' AND b.ref = a.ref + 1" \
         " WHERE a.source = 'speech' AND a.ref >= 0 ORDER BY a.id, b.id;", \
         "CREATE INDEX docs_by_ref ON docs (video_id, source, ref);" \
         "CREATE TABLE pairs (id bigserial PRIMARY KEY, doc_id bigint NOT NULL," \
         " next_id bigint NOT NULL, video_id text COLLATE \"C\" NOT NULL," \
         " start_s double precision NOT NULL, split bigint NOT NULL, text text NOT NULL," \
         " tsv tsvector NOT NULL);" \
         "CREATE INDEX pairs_by_doc ON pairs (doc_id);" \
         "CREATE INDEX pairs_by_next ON pairs (next_id);" \
         "CREATE INDEX pairs_tsv ON pairs USING gin (tsv);" \
         /* a || b: b's positions come after a's, so a phrase runs on across the boundary; \
          * a statement of many rows (COPY, INSERT ... SELECT) fires the row triggers at \
          * its end, when both neighbours are there: a pair is made once, by the first */ \
         "CREATE FUNCTION docs_pair() RETURNS trigger LANGUAGE plpgsql AS $f$ BEGIN" \
         " IF TG_OP = 'DELETE' THEN" \
         "  DELETE FROM pairs WHERE doc_id = OLD.id OR next_id = OLD.id; RETURN NULL;" \
         " END IF;" \
         " INSERT INTO pairs (doc_id, next_id, video_id, start_s, split, text, tsv)" \
         "  SELECT a.id, NEW.id, a.video_id, a.start_s, octet_length(a.text) + 1," \
         "  a.text || chr(10) || NEW.text, a.tsv || NEW.tsv FROM docs a" \
         "  WHERE a.video_id = NEW.video_id AND a.source = 'speech' AND a.ref = NEW.ref - 1" \
         "  AND NOT EXISTS (SELECT 1 FROM pairs WHERE doc_id = a.id AND next_id = NEW.id)" \
         "  ORDER BY a.id;" \
         " INSERT INTO pairs (doc_id, next_id, video_id, start_s, split, text, tsv)" \
         "  SELECT NEW.id, b.id, NEW.video_id, NEW.start_s, octet_length(NEW.text) + 1," \
         "  NEW.text || chr(10) || b.text, NEW.tsv || b.tsv FROM docs b" \
         "  WHERE b.video_id = NEW.video_id AND b.source = 'speech' AND b.ref = NEW.ref + 1" \
         "  AND NOT EXISTS (SELECT 1 FROM pairs WHERE doc_id = NEW.id AND next_id = b.id)" \
         "  ORDER BY b.id;" \
         " RETURN NULL; END $f$;" \
         "CREATE TRIGGER docs_pair_ai AFTER INSERT ON docs FOR EACH ROW" \
         " WHEN (NEW.source = 'speech' AND NEW.ref >= 0) EXECUTE FUNCTION docs_pair();" \
         "CREATE TRIGGER docs_pair_ad AFTER DELETE ON docs FOR EACH ROW" \
         " WHEN (OLD.source = 'speech') EXECUTE FUNCTION docs_pair();" \
         "INSERT INTO pairs (doc_id, next_id, video_id, start_s, split, text, tsv)" \
         " SELECT a.id, b.id, a.video_id, a.start_s, octet_length(a.text) + 1," \
         " a.text || chr(10) || b.text, a.tsv || b.tsv FROM docs a JOIN docs b" \
         " ON b.video_id = a.video_id AND b.source = 'speech' AND b.ref = a.ref + 1" \
         " WHERE a.source = 'speech' AND a.ref >= 0 ORDER BY a.id, b.id;") \
    /* 10: the poster a signed-in user chose for a video's card (a kept frame's index; NULL: \
     * the representative frame store_cards.c picks) */ \
    X(10, "ALTER TABLE videos ADD COLUMN poster_frame INTEGER;", \
          "ALTER TABLE videos ADD COLUMN poster_frame bigint;") \
    /* 11: the workers that run the queue (store_workers.c), each with a lease of its own \
     * kept by its heartbeat: `migrate` refuses while one is registered */ \
    X(11, "CREATE TABLE workers (owner TEXT PRIMARY KEY, host TEXT NOT NULL," \
          " pid INTEGER NOT NULL, stages TEXT NOT NULL, started_at REAL NOT NULL," \
          " seen_at REAL NOT NULL, lease_until REAL NOT NULL);", \
          "CREATE TABLE workers (owner text COLLATE \"C\" PRIMARY KEY, host text NOT NULL," \
          " pid bigint NOT NULL, stages text NOT NULL, started_at double precision NOT NULL," \
          " seen_at double precision NOT NULL, lease_until double precision NOT NULL);") \
    /* 12: whether a stage's inputs (stage_deps) have all settled, kept by triggers on every \
     * change of a stage's settledness, so a worker limited to some stages finds its next \
     * stage through stages_pick (name first, runnable rows only) instead of testing the \
     * inputs of every queued row of its stages (store_queue.c). PostgreSQL: the trigger \
     * locks the video's row first, so two settles of one video's inputs, committed at \
     * once, compute the stage's flag one after the other; a change of stage_deps (a \
     * new stage table) recomputes its stage's rows. */ \
    X(12, "ALTER TABLE stages ADD COLUMN ready INTEGER NOT NULL DEFAULT 1;" \
          "UPDATE stages SET ready = " STORE_READY_SQL("stages") ";" \
          "CREATE TRIGGER stages_ready_ai AFTER INSERT ON stages BEGIN" \
          " UPDATE stages SET ready = " STORE_READY_SQL("stages") " WHERE video_id = new.video_id" \
          " AND (name = new.name OR name IN (SELECT name FROM stage_deps WHERE dep = new.name)); END;" \
          "CREATE TRIGGER stages_ready_au AFTER UPDATE OF state ON stages" \
          " WHEN (old.state IN (" VT_SQL_STATES_SETTLED ")) <> (new.state IN (" VT_SQL_STATES_SETTLED ")) BEGIN" \
          " UPDATE stages SET ready = " STORE_READY_SQL("stages") " WHERE video_id = new.video_id" \
          " AND name IN (SELECT name FROM stage_deps WHERE dep = new.name); END;" \
          "CREATE TRIGGER stages_ready_ad AFTER DELETE ON stages BEGIN" \
          " UPDATE stages SET ready = " STORE_READY_SQL("stages") " WHERE video_id = old.video_id" \
          " AND name IN (SELECT name FROM stage_deps WHERE dep = old.name); END;" \
          "CREATE TRIGGER stage_deps_ready_ai AFTER INSERT ON stage_deps BEGIN" \
          " UPDATE stages SET ready = " STORE_READY_SQL("stages") " WHERE name = new.name; END;" \
          "CREATE TRIGGER stage_deps_ready_ad AFTER DELETE ON stage_deps BEGIN" \
          " UPDATE stages SET ready = " STORE_READY_SQL("stages") " WHERE name = old.name; END;" \
          "CREATE INDEX stages_pick ON stages (name, priority DESC, queued_at, video_id, ord)" \
          " WHERE state IN (" VT_SQL_STATES_UNSETTLED ") AND ready = 1;", \
          "ALTER TABLE stages ADD COLUMN ready bigint NOT NULL DEFAULT 1;" \
          "UPDATE stages SET ready = " STORE_READY_SQL("stages") ";" \
          "CREATE FUNCTION stages_ready() RETURNS trigger LANGUAGE plpgsql AS $f$" \
          " DECLARE r stages; BEGIN" \
          " IF TG_OP = 'DELETE' THEN r := OLD; ELSE r := NEW; END IF;" \
          " PERFORM 1 FROM videos WHERE id = r.video_id FOR UPDATE;" \
          " UPDATE stages SET ready = " STORE_READY_SQL("stages") " WHERE video_id = r.video_id" \
          " AND (name IN (SELECT name FROM stage_deps WHERE dep = r.name)" \
          " OR (TG_OP = 'INSERT' AND name = r.name));" \
          " RETURN NULL; END $f$;" \
          "CREATE TRIGGER stages_ready_ai AFTER INSERT ON stages FOR EACH ROW" \
          " EXECUTE FUNCTION stages_ready();" \
          "CREATE TRIGGER stages_ready_au AFTER UPDATE OF state ON stages FOR EACH ROW" \
          " WHEN ((OLD.state IN (" VT_SQL_STATES_SETTLED ")) <> (NEW.state IN (" VT_SQL_STATES_SETTLED ")))" \
          " EXECUTE FUNCTION stages_ready();" \
          "CREATE TRIGGER stages_ready_ad AFTER DELETE ON stages FOR EACH ROW" \
          " EXECUTE FUNCTION stages_ready();" \
          "CREATE FUNCTION stage_deps_ready() RETURNS trigger LANGUAGE plpgsql AS $f$" \
          " DECLARE r stage_deps; BEGIN" \
          " IF TG_OP = 'DELETE' THEN r := OLD; ELSE r := NEW; END IF;" \
          " UPDATE stages SET ready = " STORE_READY_SQL("stages") " WHERE name = r.name;" \
          " RETURN NULL; END $f$;" \
          "CREATE TRIGGER stage_deps_ready_ai AFTER INSERT OR DELETE ON stage_deps FOR EACH ROW" \
          " EXECUTE FUNCTION stage_deps_ready();" \
          "CREATE INDEX stages_pick ON stages (name, priority DESC, queued_at, video_id, ord)" \
          " WHERE state IN (" VT_SQL_STATES_UNSETTLED ") AND ready = 1;") \
    /* 13: the idle waits of the handles that pick (issue 26: every settle woke every idle \
     * worker): a row per waiting session, LISTENing on a channel of its own, with the \
     * stages it picks and since when it is idle (NULL: woken, not idle until it says so \
     * again). vidtheque_wake, run by a commit that queued or settled stages right after \
     * its COMMIT, wakes one idle live session per stage that has a runnable row, oldest \
     * idle first, and marks it woken (store_pg.c, "Waking"); with no idle waiter for a \
     * stage (a busy fleet) it reads only this small table. SQLite has the table only \
     * (its waits poll data_version) */ \
    X(13, "CREATE TABLE waiters (channel TEXT PRIMARY KEY, pid INTEGER NOT NULL," \
          " stages TEXT NOT NULL, idle_since REAL);", \
          "CREATE TABLE waiters (channel text COLLATE \"C\" PRIMARY KEY, pid integer NOT NULL," \
          " stages text[] NOT NULL, idle_since double precision);" \
          "CREATE FUNCTION vidtheque_runnable(want text, lim integer) RETURNS bigint" \
          " LANGUAGE sql STABLE AS $f$ SELECT count(*) FROM (SELECT 1 FROM stages s" \
          " WHERE s.name = want AND s.ready = 1 AND s.state IN (" VT_SQL_STATES_UNSETTLED ")" \
          " AND (s.state = " VT_SQL_STATE(queued) " OR (s.state = " VT_SQL_STATE(running) \
          " AND s.lease_until > 0 AND s.lease_until < extract(epoch FROM clock_timestamp())))" \
          " AND s.retry_at <= extract(epoch FROM clock_timestamp()) LIMIT lim) r $f$;" \
          "CREATE FUNCTION vidtheque_wake(want text[], n integer[]) RETURNS integer" \
          " LANGUAGE plpgsql AS $f$ DECLARE k integer; m bigint; ch text; woke integer := 0;" \
          " BEGIN FOR k IN 1 .. coalesce(array_length(want, 1), 0) LOOP" \
          " CONTINUE WHEN NOT EXISTS (SELECT 1 FROM waiters w WHERE w.idle_since IS NOT NULL" \
          " AND want[k] = ANY (w.stages));" \
          " m := vidtheque_runnable(want[k], n[k]);" \
          " CONTINUE WHEN m = 0;" \
          " FOR ch IN UPDATE waiters SET idle_since = NULL WHERE channel IN (SELECT w.channel" \
          " FROM waiters w WHERE w.idle_since IS NOT NULL AND want[k] = ANY (w.stages)" \
          " AND EXISTS (SELECT 1 FROM pg_stat_get_activity(w.pid))" \
          " ORDER BY w.idle_since, w.channel LIMIT m FOR UPDATE SKIP LOCKED) RETURNING channel" \
          " LOOP PERFORM pg_notify(ch, want[k]); woke := woke + 1; END LOOP;" \
          " END LOOP; RETURN woke; END $f$;") \
    /* 14: the attempts a stage had when it was last queued again on purpose (redo): its \
     * budget of retries (pipeline.c: a failure, a crash found by the claim) counts \
     * attempts - attempts_base, while attempts counts on (history, fencing token). A row \
     * queued with no retry pending (redone, given back, never run) starts its budget \
     * from its attempts so far, so a dead letter redone before the upgrade gets its \
     * retries too; every other row from 0, as before */ \
    X(14, "ALTER TABLE stages ADD COLUMN attempts_base INTEGER NOT NULL DEFAULT 0;" \
          "UPDATE stages SET attempts_base = attempts" \
          " WHERE state = " VT_SQL_STATE(queued) " AND retry_at = 0;", \
          "ALTER TABLE stages ADD COLUMN attempts_base bigint NOT NULL DEFAULT 0;" \
          "UPDATE stages SET attempts_base = attempts" \
          " WHERE state = " VT_SQL_STATE(queued) " AND retry_at = 0;") \
    /* the end of the list */
/* clang-format on */

#define VT_STORE_MIGRATION_ONE(version, sqlite, pg) +1
/* How many entries the list has. */
#define VT_STORE_N_MIGRATIONS (0 VT_STORE_MIGRATIONS(VT_STORE_MIGRATION_ONE))

#endif
