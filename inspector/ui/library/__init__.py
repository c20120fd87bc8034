"""A server's resources, templates and prompts: `resources` (`ResourcesPane`), `prompts` (`PromptsPane`),
`items` (their list models and descriptions), `arg_form` (`ArgumentForm`, with completion), `skills`
(`SkillsPane`: a server's skills, SEP-2640)."""

__all__ = ["arg_form", "items", "prompts", "resources", "skills"]
