"""Mining: history scan → candidate commits → red→green verification → task records
(``docs/contracts.md`` §6, §7)."""
