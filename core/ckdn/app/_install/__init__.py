"""Installation and set-up: the starter config, the skills, ``ckdn doctor``'s rules."""
