"""The package's layers, read from its import statements (each module parsed, none imported): the runtime never
imports the robot-authoring tools (humanoid_balance.authoring: init, import-sdf), which the command line imports
only inside the functions of the commands that use them; the math (model, estimation, control, mapping) imports
no ROS and no node."""
import ast
from pathlib import Path

import pytest

REPO = next(folder for folder in Path(__file__).resolve().parents if (folder / "setup.py").exists())
PACKAGE = REPO / "humanoid_balance"
AUTHORING = "humanoid_balance.authoring"
MATH_LAYERS = ("model", "estimation", "control", "mapping")
ROS = ("rclpy", "humanoid_balance.nodes")  # and every ROS message package (*_msgs)


def module_name(path):
    """``humanoid_balance/a/b.py`` → ``humanoid_balance.a.b`` (a package's ``__init__.py`` → the package)."""
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path):
    """(line, imported module, whether inside a function) for every import statement of the file at ``path``;
    ``from M import a`` gives both M and M.a (a may be a module), relative imports are resolved."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    found = []

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            nested = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                found.extend((child.lineno, alias.name, in_function) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = package.split(".")[:len(package.split(".")) - (child.level - 1)]
                    base = ".".join(anchor + ([base] if base else []))
                found.append((child.lineno, base, in_function))
                found.extend((child.lineno, f"{base}.{alias.name}", in_function) for alias in child.names)
            visit(child, nested)

    visit(tree, False)
    return found


def within(name, module):
    return name == module or name.startswith(module + ".")


def runtime_files():
    """Every Python file the runtime is made of: the package outside authoring/ and cli.py, and the launch files."""
    files = [path for path in sorted(PACKAGE.rglob("*.py"))
             if not within(module_name(path), AUTHORING) and path != PACKAGE / "cli.py"]
    return files + sorted((REPO / "launch").glob("*.py"))


def test_the_files_are_found():
    names = {module_name(path) for path in PACKAGE.rglob("*.py")}
    assert {"humanoid_balance.cli", "humanoid_balance.model.robot", "humanoid_balance.authoring.robot_init",
            "humanoid_balance.authoring.sdf_import"} <= names


def test_the_runtime_never_imports_the_authoring_tools():
    offending = [f"{path.relative_to(REPO)}:{line} imports {name}"
                 for path in runtime_files() for line, name, _ in imports(path) if within(name, AUTHORING)]
    assert not offending, "the runtime imports humanoid_balance.authoring:\n" + "\n".join(offending)


def test_the_command_line_imports_the_authoring_tools_only_in_the_commands_that_use_them():
    cli = PACKAGE / "cli.py"
    eager = [f"cli.py:{line} imports {name} at module level"
             for line, name, in_function in imports(cli) if within(name, AUTHORING) and not in_function]
    assert not eager, "\n".join(eager)


@pytest.mark.parametrize("layer", MATH_LAYERS)
def test_the_math_imports_no_ros_and_no_node(layer):
    files = sorted((PACKAGE / layer).rglob("*.py"))
    assert files
    offending = [f"{path.relative_to(REPO)}:{line} imports {name}" for path in files
                 for line, name, _ in imports(path)
                 if any(within(name, ros) for ros in ROS) or name.split(".")[0].endswith("_msgs")]
    assert not offending, f"{layer}/ is math without ROS:\n" + "\n".join(offending)
