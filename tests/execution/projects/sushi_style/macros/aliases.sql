{% macro alias(expr, name) %}
  {{ expr }} AS {{ name }}
{% endmacro %}
