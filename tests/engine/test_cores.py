"""engine.cores: the default thread counts of the parts that scale to a few threads."""
from __future__ import annotations

from goengine.engine.cores import cores_up_to


def test_the_machines_cores_capped():
    assert [cores_up_to(4, cores=c) for c in (1, 2, 3, 4, 64)] == [1, 2, 3, 4, 4]


def test_at_least_one_core():
    assert cores_up_to(4, cores=0) == 1
    assert cores_up_to(0, cores=8) == 1


def test_without_a_count_it_asks_the_machine(monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 3)
    assert cores_up_to(4) == 3 and cores_up_to(2) == 2
    monkeypatch.setattr("os.cpu_count", lambda: None)     # unknown: one core
    assert cores_up_to(4) == 1
