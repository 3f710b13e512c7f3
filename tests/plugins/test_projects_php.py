"""PHP plugin: composer scripts first, then the tools the project configures."""

import json

from stepkit.testing import resolve_gates

PHP = "stepkit.plugins.projects.php"


def test_composer_scripts_win(stepkit_project):
    composer = {"scripts": {"test": "phpunit", "lint": "phpcs src", "cs-fix": "php-cs-fixer fix"}}
    project = stepkit_project({"composer.json": json.dumps(composer), "phpunit.xml": "<phpunit/>"})
    assert resolve_gates(project) == {
        "format": ("composer run-script cs-fix", PHP),
        "lint": ("composer run-script lint", PHP),
        "build": (None, None),
        "tests": ("composer run-script test", PHP),
    }


def test_tool_configs_without_scripts(stepkit_project):
    project = stepkit_project(
        {
            "composer.json": "{}",
            ".php-cs-fixer.dist.php": "<?php\n",
            "phpcs.xml.dist": "<ruleset/>",
            "phpstan.neon": "parameters:\n",
            "phpunit.xml.dist": "<phpunit/>",
        }
    )
    assert {gate: cmd for gate, (cmd, _) in resolve_gates(project).items()} == {
        "format": "vendor/bin/php-cs-fixer fix --path-mode=intersection {files:.php}",
        "lint": "vendor/bin/phpcs",
        "build": "vendor/bin/phpstan analyse",
        "tests": "vendor/bin/phpunit",
    }


def test_pest_and_psalm(stepkit_project):
    composer = {"require-dev": {"pestphp/pest": "^2.0"}}
    project = stepkit_project({"composer.json": json.dumps(composer), "psalm.xml": "<psalm/>"})
    gates = resolve_gates(project)
    assert gates["tests"] == ("vendor/bin/pest", PHP)
    assert gates["build"] == ("vendor/bin/psalm", PHP)


def test_bare_composer_project_has_no_commands(stepkit_project):
    project = stepkit_project({"composer.json": '{"require": {"php": ">=8.1"}}'})
    assert all(answer == (None, None) for answer in resolve_gates(project).values())


def test_tools_phive_put_in_tools_run_from_there(stepkit_project):
    project = stepkit_project(
        {
            "composer.json": json.dumps({"require-dev": {"phpunit/phpunit": "^11"}}),
            ".php-cs-fixer.dist.php": "<?php return new PhpCsFixer\\Config();\n",
            "phpstan.neon": "parameters:\n  level: 5\n",
            "tools/php-cs-fixer": "#!/usr/bin/env php\n",
            ".phive/phars.xml": '<phive><phar name="php-cs-fixer" location="./tools/php-cs-fixer" copy="true"/></phive>\n',
        }
    )
    gates = resolve_gates(project)
    assert gates["format"] == ("tools/php-cs-fixer fix --path-mode=intersection {files:.php}", PHP)
    assert gates["build"] == ("vendor/bin/phpstan analyse", PHP)  # not in tools/: composer's
