"""A server's resources, templates and prompts: `resources` (`ResourcesPane`), `prompts` (`PromptsPane`),
`items` (their list models and descriptions), `arg_form` (`ArgumentForm`, with completion)."""

__all__ = ["arg_form", "items", "prompts", "resources"]
