#!/usr/bin/env python3
# Makes the seeds of fuzz/corpus/foreign_db from shared/realdata:
#   python3 scripts/fuzz_seed_foreign_db.py .../ascend_pytorch_profiler_0.db fuzz/corpus/foreign_db/ascend_pt_rank0.db 24
#   python3 scripts/fuzz_seed_foreign_db.py .../msprof_0.db fuzz/corpus/foreign_db/msprof.db 12 first
# (work on copies: the profilers' dbs are WAL files that an open may touch).
# Trims an msprof / Ascend PyTorch Profiler db to a small fuzz seed: the first N rows of each table
# (by rowid; TASK, COMPUTE_TASK_INFO, COMMUNICATION_* and TASK_PMU_INFO by related ids), STRING_IDS
# only the ids the kept rows use, rollback journal, 512-byte pages.
import shutil, sqlite3, sys
src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
shutil.copy(src, dst)
db = sqlite3.connect(dst)
db.execute("PRAGMA journal_mode=DELETE")
tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'")]
# Keep a window of tasks around the first collective (so links and kernels are both in), else the first N.
has = lambda t: t in tables
if has("TASK"):
    first = None
    if has("COMMUNICATION_TASK_INFO"):
        first = db.execute("SELECT MIN(globalTaskId) FROM COMMUNICATION_TASK_INFO").fetchone()[0]
    lo = max(0, (first or 0) - n // 2) if len(sys.argv) < 5 else 0
    db.execute(f"DELETE FROM TASK WHERE globalTaskId NOT BETWEEN {lo} AND {lo + n}")
    for t in ("COMPUTE_TASK_INFO", "COMMUNICATION_TASK_INFO", "TASK_PMU_INFO"):
        if has(t):
            db.execute(f"DELETE FROM {t} WHERE globalTaskId NOT IN (SELECT globalTaskId FROM TASK)")
    if has("TASK_PMU_INFO"):
        db.execute(f"DELETE FROM TASK_PMU_INFO WHERE rowid NOT IN (SELECT rowid FROM TASK_PMU_INFO LIMIT {n})")
for t in tables:
    if t in ("TASK", "COMPUTE_TASK_INFO", "COMMUNICATION_TASK_INFO", "TASK_PMU_INFO", "STRING_IDS") or t.startswith("ENUM_"):
        continue
    if t == "COMMUNICATION_OP":
        continue
    db.execute(f'DELETE FROM "{t}" WHERE rowid NOT IN (SELECT rowid FROM "{t}" ORDER BY rowid LIMIT {n})')
used = set()
for t in tables:
    if t == "STRING_IDS":
        continue
    for row in db.execute(f'SELECT * FROM "{t}"'):
        used.update(v for v in row if isinstance(v, int))
db.execute("CREATE TEMP TABLE keep(id INTEGER PRIMARY KEY)")
db.executemany("INSERT OR IGNORE INTO keep VALUES (?)", [(v,) for v in used])
db.execute("DELETE FROM STRING_IDS WHERE id NOT IN (SELECT id FROM keep)")
db.commit()
db.execute("PRAGMA page_size=512")
db.execute("VACUUM")
db.close()
