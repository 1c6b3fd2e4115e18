"""Producers: outside systems turned into events on the source topics.

Every source follows the same loop: observe, emit events through an
:class:`~sources.sink.EventSink`, wait for the broker's acknowledgement, then
save a checkpoint. A crash between the two re-emits a little (at least once, with
idempotent keys) and never skips a change.
"""
