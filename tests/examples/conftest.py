"""Markers of the examples' tests."""


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: builds a temporary venv and installs packages into it "
                   "(deselect with -m 'not slow')")
