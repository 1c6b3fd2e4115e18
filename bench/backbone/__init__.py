"""The event-backbone benchmark behind ``make bench``.

Bare aiokafka, an aiokafka relay and a Faust agent, each on Tansu and on Apache
Kafka, plus the embedded stack's start-up time. Results go to
``bench-results/backbone.json`` and a table on stdout.
"""
