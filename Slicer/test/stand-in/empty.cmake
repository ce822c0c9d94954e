# Nothing: the stand-in's extension config and CPack steps.
