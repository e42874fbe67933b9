"""The exception every part of the package raises."""


class HPVMError(Exception):
    """A graph, model or command the compiler or runtime refused.

    `diagnostics` carries the compiler's own report (file:line:col: error: ...)
    when the error came from the verifier or a compile; it is part of the message.
    """

    def __init__(self, message: str, diagnostics: str = ""):
        self.diagnostics = diagnostics.strip()
        text = message if not self.diagnostics else f"{message}\n{self.diagnostics}"
        super().__init__(text)


class HPVMWarning(UserWarning):
    """A compile that succeeded with the compiler's warning: something it could not do (an
    OpenCL image without its SPIR 1.2 fallback, a CUDA image without cubins, a node kept on
    the CPU), in the compiler's words. A cached build says its warnings again when used."""
