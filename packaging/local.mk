# Packages: `make rpm` and `make deb` build from the `make dist` tarball.
EXTRA_DIST += packaging/loom.spec.in packaging/debian packaging/check-packages.sh LICENSE

# packaging/loom.spec: config.status remakes it when loom.spec.in is newer.
rpm: dist packaging/loom.spec
	rm -rf $(abs_builddir)/rpmbuild
	mkdir -p $(abs_builddir)/rpmbuild/SOURCES $(abs_builddir)/rpmbuild/SPECS
	cp $(DIST_ARCHIVES) $(abs_builddir)/rpmbuild/SOURCES/
	cp packaging/loom.spec $(abs_builddir)/rpmbuild/SPECS/
	rpmbuild --define "_topdir $(abs_builddir)/rpmbuild" --define "slurm_src $(SLURM_SRC_ARG)" \
		--define "slurm_prefix $(SLURM_PREFIX)" \
		--nodeps -bb $(abs_builddir)/rpmbuild/SPECS/loom.spec
	@ls $(abs_builddir)/rpmbuild/RPMS/*/*.rpm

deb: dist
	rm -rf $(abs_builddir)/debbuild
	mkdir -p $(abs_builddir)/debbuild
	tar -C $(abs_builddir)/debbuild -xf $(PACKAGE)-$(VERSION).tar.xz
	cp -r $(abs_srcdir)/packaging/debian $(abs_builddir)/debbuild/$(PACKAGE)-$(VERSION)/debian
	chmod -R u+w $(abs_builddir)/debbuild/$(PACKAGE)-$(VERSION)/debian
	d=$(abs_builddir)/debbuild/$(PACKAGE)-$(VERSION)/debian; \
	echo "$(SLURM_SRC_ARG)" > $$d/slurm-src; \
	echo "$(SLURM_VERSION_STRING)" > $$d/slurm-version; \
	echo "$(SLURM_VERSION_NEXT_MICRO)" > $$d/slurm-next-micro; \
	echo "$(SLURM_SERIES)" > $$d/slurm-series; \
	echo "$(SLURM_SERIES_NEXT)" > $$d/slurm-series-next; \
	echo "$(SLURM_PREFIX)" > $$d/slurm-prefix; \
	if [ "$(SLURM_PREFIX)" = /usr ]; then echo "/usr/lib/$$(dpkg-architecture -qDEB_HOST_MULTIARCH)/slurm-wlm"; \
	else echo "$(SLURM_PREFIX)/lib/slurm"; fi > $$d/slurm-plugindir
	printf '%s\n' "loom ($(VERSION)-1+slurm$(SLURM_VERSION_STRING)) unstable; urgency=medium" "" "  * Release $(VERSION)." "" \
		" -- loom developers <loom@lists.loom-hpc.org>  $$(date -R)" \
		> $(abs_builddir)/debbuild/$(PACKAGE)-$(VERSION)/debian/changelog
	cd $(abs_builddir)/debbuild/$(PACKAGE)-$(VERSION) && dpkg-buildpackage -b -us -uc -d -j2
	@ls $(abs_builddir)/debbuild/*.deb

.PHONY: rpm deb
