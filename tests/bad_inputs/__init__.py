"""The valid calls (baselines) of the API-wide bad-input test, one module per module of
the package."""
