"""Ports: what the service needs from the outside world, as typing.Protocols.

Each port has a local adapter (adapters/local) and an AWS adapter (adapters/aws),
and one contract test suite (tests/contract) that both pass.
"""
