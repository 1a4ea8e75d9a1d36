"""tox 4 plugin for ckdn: checks run through ckdn inside tox environments."""
