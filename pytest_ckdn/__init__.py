"""pytest plugin for ckdn: ``pytest --ckdn-digest`` leaves a ckdn run dir and digest.

The plugin module (``pytest_ckdn.plugin``) is registered through the ``pytest11``
entry point and stays inert unless enabled.
"""
