"""A question past DuckDB's memory_limit is a precise, retryable error naming the setting."""

from __future__ import annotations

import re

import duckdb
import pytest

from agentsla.collector.store.schema import migrate
from agentsla.errors import RetryableError
from agentsla.queries.engines.duckdb import DuckDBStore
from agentsla.queries.findings import find_findings


def test_out_of_memory_names_the_question_and_memory_limit():
    con = duckdb.connect(config={"memory_limit": "20MB"})
    migrate(con)
    # 200,000 tasks of ten spans each: the ghost-work detector over raw spans cannot fit in
    # 20 MB (/budget, which used to be the example, now reads rollups and stored self times)
    con.execute("""
        insert into span_store (trace_id, span_id, parent_span_id, task_id, name, start_ns,
                                end_ns, hop_kind)
        select 't' || (i // 10), 's' || i, case when i % 10 = 0 then null else 's' || (i - i % 10) end,
               'k' || (i // 10), repeat('x', 50), i * 1000, i * 1000 + 5000, 'model'
        from range(2000000) r(i)""")
    con.execute("""
        insert into task_store (task_id, trace_id, root_span_id, start_ns, end_ns, finished, outcome)
        select 'k' || j, 't' || j, 's' || (j * 10), j * 10000, j * 10000 + 5000, true, 'success'
        from range(200000) r(j)""")
    with pytest.raises(RetryableError) as err:
        find_findings(DuckDBStore(con), 0, 10**13, "ghost_work", {})
    assert err.value.status == 503
    # the question is named (a generic one with the evidence snippet it ran): the detector's
    # first statement over the raw rows, the check of where its tasks start, or its evidence
    named = r"'findings/(evidence_tasks_near|evidence_raw\[evidence_work_after_cutoff\])'"
    assert re.match(named + " needs more memory than memory_limit", err.value.message), \
        err.value.message
