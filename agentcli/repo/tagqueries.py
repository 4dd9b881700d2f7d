"""Tree-sitter tag queries: which nodes define a name and which refer to one, per language.

Capture names follow one convention: `@name.definition.KIND` marks the defined name and
`@definition.KIND` the whole definition (its first lines become the signature shown in the map);
`@name.reference.KIND` marks a name used elsewhere (a name captured both as a constant and as an
import, `const x = require("x")`, is an import only); KIND `method` is a call through an object or
module (`x.run()`), which says less about where `run` is defined than a plain call does. A `#match?`
on an upper-case pattern keeps only conventional constants where a language has no `const` keyword.
"""

from __future__ import annotations

UPPER = '"^[A-Z][A-Z0-9_]*$"'

PYTHON = f"""
(class_definition name: (identifier) @name.definition.class) @definition.class
(function_definition name: (identifier) @name.definition.function) @definition.function
(module (assignment left: (identifier) @name.definition.constant) @definition.constant
  (#match? @name.definition.constant {UPPER}))

(call function: (identifier) @name.reference.call)
(call function: (attribute attribute: (identifier) @name.reference.method))
(decorator (identifier) @name.reference.call)
(decorator (attribute attribute: (identifier) @name.reference.method))
(class_definition superclasses: (argument_list (identifier) @name.reference.class))
(class_definition superclasses: (argument_list (attribute attribute: (identifier) @name.reference.class)))
(type (identifier) @name.reference.type)
(import_from_statement name: (dotted_name (identifier) @name.reference.import))
(import_from_statement name: (aliased_import name: (dotted_name (identifier) @name.reference.import)))
"""

_JS_COMMON = """
(function_declaration name: (identifier) @name.definition.function) @definition.function
(generator_function_declaration name: (identifier) @name.definition.function) @definition.function
(method_definition name: [(property_identifier) (private_property_identifier)] @name.definition.method)
  @definition.method
(lexical_declaration (variable_declarator name: (identifier) @name.definition.function
  value: [(arrow_function) (function_expression)])) @definition.function
(variable_declaration (variable_declarator name: (identifier) @name.definition.function
  value: [(arrow_function) (function_expression)])) @definition.function
(program (lexical_declaration (variable_declarator name: (identifier) @name.definition.constant))
  @definition.constant)
(program (export_statement declaration: (lexical_declaration
  (variable_declarator name: (identifier) @name.definition.constant))) @definition.constant)

(call_expression function: (identifier) @name.reference.call)
(call_expression function: (member_expression property: (property_identifier) @name.reference.method))
(new_expression constructor: (identifier) @name.reference.class)
(new_expression constructor: (member_expression property: (property_identifier) @name.reference.class))
(import_specifier name: (identifier) @name.reference.import)
(variable_declarator name: (identifier) @name.reference.import
  value: (call_expression function: (identifier) @_require (#eq? @_require "require")))
"""

_JSX = """
(jsx_opening_element name: (identifier) @name.reference.class)
(jsx_self_closing_element name: (identifier) @name.reference.class)
"""

JAVASCRIPT = (
    _JS_COMMON
    + _JSX
    + """
(class_declaration name: (identifier) @name.definition.class) @definition.class
(class_heritage (identifier) @name.reference.class)
"""
)

TYPESCRIPT = (
    _JS_COMMON
    + """
(class_declaration name: (type_identifier) @name.definition.class) @definition.class
(abstract_class_declaration name: (type_identifier) @name.definition.class) @definition.class
(interface_declaration name: (type_identifier) @name.definition.interface) @definition.interface
(type_alias_declaration name: (type_identifier) @name.definition.type) @definition.type
(enum_declaration name: (identifier) @name.definition.enum) @definition.enum
(function_signature name: (identifier) @name.definition.function) @definition.function
(method_signature name: (property_identifier) @name.definition.method) @definition.method
(abstract_method_signature name: (property_identifier) @name.definition.method) @definition.method

(type_identifier) @name.reference.type
(class_heritage (extends_clause value: (identifier) @name.reference.class))
"""
)

TSX = TYPESCRIPT + _JSX

GO = """
(function_declaration name: (identifier) @name.definition.function) @definition.function
(method_declaration name: (field_identifier) @name.definition.method) @definition.method
(type_spec name: (type_identifier) @name.definition.type) @definition.type
(method_elem name: (field_identifier) @name.definition.method) @definition.method
(source_file (const_declaration (const_spec name: (identifier) @name.definition.constant) @definition.constant))

(call_expression function: (identifier) @name.reference.call)
(call_expression function: (selector_expression field: (field_identifier) @name.reference.method))
(type_identifier) @name.reference.type
"""

RUST = """
(function_item name: (identifier) @name.definition.function) @definition.function
(function_signature_item name: (identifier) @name.definition.function) @definition.function
(struct_item name: (type_identifier) @name.definition.class) @definition.class
(union_item name: (type_identifier) @name.definition.class) @definition.class
(enum_item name: (type_identifier) @name.definition.enum) @definition.enum
(trait_item name: (type_identifier) @name.definition.interface) @definition.interface
(source_file (type_item name: (type_identifier) @name.definition.type) @definition.type)
(mod_item body: (declaration_list (type_item name: (type_identifier) @name.definition.type) @definition.type))
(mod_item name: (identifier) @name.definition.module body: (_)) @definition.module
(macro_definition name: (identifier) @name.definition.macro) @definition.macro
(const_item name: (identifier) @name.definition.constant) @definition.constant
(static_item name: (identifier) @name.definition.constant) @definition.constant
(impl_item type: [
  (type_identifier) @name.definition.impl
  (generic_type type: (type_identifier) @name.definition.impl)
  (reference_type type: [(type_identifier) (generic_type type: (type_identifier))] @name.definition.impl)
  (scoped_type_identifier name: (type_identifier) @name.definition.impl)]) @definition.impl

(call_expression function: (identifier) @name.reference.call)
(call_expression function: (field_expression field: (field_identifier) @name.reference.method))
(call_expression function: (scoped_identifier name: (identifier) @name.reference.call))
(macro_invocation macro: (identifier) @name.reference.call)
(type_identifier) @name.reference.type
(use_declaration argument: (scoped_identifier name: (identifier) @name.reference.import))
(use_list (identifier) @name.reference.import)
"""

JAVA = f"""
(class_declaration name: (identifier) @name.definition.class) @definition.class
(interface_declaration name: (identifier) @name.definition.interface) @definition.interface
(enum_declaration name: (identifier) @name.definition.enum) @definition.enum
(record_declaration name: (identifier) @name.definition.class) @definition.class
(annotation_type_declaration name: (identifier) @name.definition.interface) @definition.interface
(method_declaration name: (identifier) @name.definition.method) @definition.method
(constructor_declaration name: (identifier) @name.definition.method) @definition.method
(field_declaration declarator: (variable_declarator name: (identifier) @name.definition.constant)
  (#match? @name.definition.constant {UPPER})) @definition.constant

(method_invocation !object name: (identifier) @name.reference.call)
(method_invocation object: (_) name: (identifier) @name.reference.method)
(object_creation_expression type: (type_identifier) @name.reference.class)
(type_identifier) @name.reference.type
(import_declaration (scoped_identifier name: (identifier) @name.reference.import))
"""

_C_FAMILY = f"""
(function_definition declarator: (function_declarator declarator: (identifier) @name.definition.function))
  @definition.function
(function_definition declarator: (_ declarator: (function_declarator
  declarator: (identifier) @name.definition.function))) @definition.function
(declaration declarator: (function_declarator declarator: (identifier) @name.definition.function))
  @definition.function
(declaration declarator: (_ declarator: (function_declarator
  declarator: (identifier) @name.definition.function))) @definition.function
(struct_specifier name: (type_identifier) @name.definition.class body: (_)) @definition.class
(union_specifier name: (type_identifier) @name.definition.class body: (_)) @definition.class
(enum_specifier name: (type_identifier) @name.definition.enum body: (_)) @definition.enum
(type_definition declarator: (type_identifier) @name.definition.type) @definition.type
(preproc_def name: (identifier) @name.definition.constant) @definition.constant
(preproc_function_def name: (identifier) @name.definition.macro) @definition.macro
(translation_unit (declaration declarator: (init_declarator declarator: (identifier) @name.definition.constant))
  @definition.constant (#match? @name.definition.constant {UPPER}))

(call_expression function: (identifier) @name.reference.call)
(call_expression function: (field_expression field: (field_identifier) @name.reference.method))
(type_identifier) @name.reference.type
"""

C = _C_FAMILY

CPP = (
    _C_FAMILY
    + """
(function_definition declarator: (function_declarator declarator: (field_identifier) @name.definition.method))
  @definition.method
(function_definition declarator: (function_declarator
  declarator: (qualified_identifier name: (identifier) @name.definition.method))) @definition.method
(function_definition declarator: (_ declarator: (function_declarator
  declarator: (qualified_identifier name: (identifier) @name.definition.method)))) @definition.method
(field_declaration declarator: (function_declarator declarator: (field_identifier) @name.definition.method))
  @definition.method
(class_specifier name: (type_identifier) @name.definition.class body: (_)) @definition.class
(namespace_definition name: (namespace_identifier) @name.definition.module) @definition.module
(alias_declaration name: (type_identifier) @name.definition.type) @definition.type
(namespace_definition (declaration_list (declaration
  declarator: (init_declarator declarator: (identifier) @name.definition.constant)) @definition.constant))

(call_expression function: (qualified_identifier name: (identifier) @name.reference.call))
(call_expression function: (qualified_identifier name: (template_function name: (identifier) @name.reference.call)))
(call_expression function: (template_function name: (identifier) @name.reference.call))
(qualified_identifier name: (type_identifier) @name.reference.type)
"""
)

BASH = f"""
(function_definition name: (word) @name.definition.function) @definition.function
(program (variable_assignment name: (variable_name) @name.definition.constant) @definition.constant
  (#match? @name.definition.constant {UPPER}))
(program (declaration_command (variable_assignment name: (variable_name) @name.definition.constant))
  @definition.constant (#match? @name.definition.constant {UPPER}))

(command name: (command_name (word) @name.reference.call))
(simple_expansion (variable_name) @name.reference.variable)
(expansion (variable_name) @name.reference.variable)
"""

QUERIES: dict[str, str] = {
    "python": PYTHON,
    "javascript": JAVASCRIPT,
    "typescript": TYPESCRIPT,
    "tsx": TSX,
    "go": GO,
    "rust": RUST,
    "java": JAVA,
    "c": C,
    "cpp": CPP,
    "bash": BASH,
}

# Bump when a query changes, so cached tags from older queries are not reused.
QUERIES_VERSION = 5
