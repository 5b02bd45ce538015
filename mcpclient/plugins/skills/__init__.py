"""Skills over MCP (SEP-2640) as a built-in extension: every Client has an ``extension.Skills``.

``model`` holds what a skill is (``Skill``, ``SkillFile``) and how a file read is verified;
``extension`` the ``Skills`` extension that lists, loads and reads them through its
``Session``. The public names are in ``mcpclient`` (``Skill``, ``SkillFile``). This package's
``__init__`` imports neither: the client core reads the ``model`` module only.
"""
