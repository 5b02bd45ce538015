"""Skills over MCP (SEP-2640) as a built-in extension: every Client has an ``extension.Skills``.

What a skill is (``Skill``, ``SkillFile``) and how a file read is verified is in
``mcpclient._client.skill_model``, below the client core, since ``Client.list_skills`` returns
them. Here: ``extension``, the ``Skills`` extension that lists, loads and reads them through
its ``Session``. The public names are in ``mcpclient`` (``Skill``, ``SkillFile``). This
package's ``__init__`` imports nothing.
"""
