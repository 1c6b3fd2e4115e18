"""Sustained load on the embedded stack, and 1 worker vs 2 workers.

**Load** (``bench-results/load.json``): ``EmbeddedStack`` (Tansu, embedded PostgreSQL,
a Faust worker, ``tribal project``, ``tribal api``) on a temporary data dir, driven
for ``--duration`` seconds at the same time by

* 100 turns/s: ``POST /v1/memory/turns`` over HTTP across 20 ``group_id``s (open loop);
* 50 file changes/s: ``FileChanged`` of small Python files that keep changing, through
  a ``KafkaSink`` to ``files.changes`` (open loop, each send waits for its ack);
* 50 concurrent ``POST /v1/retrieve`` clients (closed loop).

Every 5 s it samples the lag of each projection (``projection_lags``), the worker's
consumer-group lag per source topic, and the RSS and CPU of each child. The verdict
compares the samples after the first minute with the value at the end of it.

**Scaling** (``bench-results/scaling.json``): a fixed backlog of file changes, then
of turns, drained by 1 and then by 2 ``tribal worker`` processes sharing one consumer
group on Tansu; the rate of each stage is what one or two workers sustain.

**Capacity** (``bench-results/capacity.json``; each phase merges into the file):

* ``--capacity``: each worker role (``tribal worker --role chunk|embed|memory``, 1 and 2
  processes) drains a backlog of its own inputs, which gives its rate per machine; then
  the mix above scaled by one factor (100:50:50 x f) is searched: a short calibration
  run, then up to ``--steps`` runs of ``--duration`` s on a fresh stack each, bisecting
  between the highest factor that held (flat lag, every input accepted, at most 5 % of
  retrievals answering the fallback) and the lowest that did not;
* ``--per-kind``: turns alone and file changes alone (a shorter search each) and
  retrieval alone;
* ``--overload``: ``--overload-multiple`` x the held factor for ``--overload-duration``
  s, a drain, and every accepted turn and file change looked for on its topics and in
  the index;
* the projection, always: machines like this one for the whole 100:50:50 load, per role
  from the role rates and for the API and the store from the cores they used.

    python -m bench.load [--quick | --duration 300] [--skip-load] [--skip-scaling]
    python -m bench.load --capacity [--per-kind] [--overload] [--duration 300]
"""
